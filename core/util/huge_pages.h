#pragma once
// Large buffers on transparent huge pages. A 4 096-token head map is 64 MB; glibc gives every buffer above
// 32 MB fresh pages from the kernel and returns them on free, so each map costs 16 384 page faults — on a
// virtual machine ~2 µs each, more than making the map. With glibc's tunable glibc.malloc.hugetlb=1 its
// malloc asks for transparent huge pages (madvise), 512 times fewer faults (and fewer TLB misses). Measured
// on this project's 2-core VM, Qwen2.5-0.5B-shaped model, 4 096 tokens, 1 thread, `attnlens-cli bench
// --text`: prefill 51.0 s without either, 48.7 s with keepLargeBuffers() alone, 30.1 s with both; peak 1.71
// -> 1.78 GB.
//
// GLIBC_TUNABLES is read before main() runs, so useHugePages() re-executes the program once with it set.
// Call it first thing in main(): it returns when the tunable is already set, when the kernel offers no
// transparent huge pages, when ATTNLENS_NO_HUGE_PAGES is set (debuggers that do not follow exec), when the
// C library is not glibc, or when re-executing fails (nothing changes then).

#include <cstddef>

namespace attnlens {

void useHugePages(char** argv);

// And once running: mallopt so that freed large buffers serve the next ones — one arena for every thread (a
// worker's arena cannot hold 64 MB: each map was mmapped afresh), large blocks from the heap (mmap threshold
// 1 GiB), up to 512 MiB of freed heap kept (trim threshold). A head switch then reuses the previous map's
// pages. The cost: freed memory stays with the process, and every thread allocates from one arena (one lock).
// Nothing happens where the C library is not glibc.
void keepLargeBuffers();

// Maps `bytes` of heap now (touching every page) and frees them, so that the next large buffers up to that
// size (with keepLargeBuffers) reuse pages the kernel has already given — a cost paid on a worker at a quiet
// moment instead of on the next head switch. On this project's VM the first new 4 096² map and its 64 MB
// image took 260-360 ms instead of 80: 32 huge-page faults at ~3.5 ms each (the kernel compacting memory).
// Takes ~100 ms per 200 MB; call it off the GUI thread.
void reserveHeap(std::size_t bytes);

} // namespace attnlens
