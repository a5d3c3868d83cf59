#pragma once
// Large buffers on transparent huge pages. A 4 096-token head map is 64 MB; glibc gives every buffer above
// 32 MB fresh pages from the kernel and returns them on free, so each map costs 16 384 page faults — on a
// virtual machine ~2 µs each, more than making the map. With glibc's tunable glibc.malloc.hugetlb=1 its
// malloc asks for transparent huge pages (madvise), 512 times fewer faults. Measured on the 2-core VM of
// this project, Qwen2.5-0.5B-shaped model, 4 096 tokens, 1 thread: prefill 75 s -> 37 s in the app, a head
// switch 700 -> 290 ms.
//
// GLIBC_TUNABLES is read before main() runs, so useHugePages() re-executes the program once with it set.
// Call it first thing in main(): it returns when the tunable is already set, when the kernel offers no
// transparent huge pages, when ATTNLENS_NO_HUGE_PAGES is set (debuggers that do not follow exec), when the
// C library is not glibc, or when re-executing fails (nothing changes then).

namespace attnlens {

void useHugePages(char** argv);

} // namespace attnlens
