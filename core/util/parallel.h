#pragma once
// Intra-op threads: one process-wide team size that every parallel kernel uses — oneDNN's matmuls (their
// own OpenMP team), the per-head attention loop, the general products split over their longer side,
// Winograd's 16 products, and row-wise norms and activations.
//
// Mechanism: libgomp's OpenMP team, the runtime Debian's oneDNN already computes on, so one pool of
// threads serves both and they never oversubscribe the cores. Work is split into at most threads()
// contiguous chunks (static schedule); a region entered from inside another runs serially. Without an
// OpenMP compiler (the clang fuzz build) everything runs on the calling thread.

#include <cstdint>
#include <functional>

namespace attnlens {

constexpr int kMaxComputeThreads = 256;

// The team size parallel kernels use now (≥ 1; 1 until setComputeThreads is called).
int computeThreads();
// Sets the team size for every later kernel, 1..kMaxComputeThreads (clamped); process-wide.
void setComputeThreads(int threads);
// Physical cores this process may run on (SMT siblings counted once; the affinity mask respected);
// at least 1.
int physicalCores();
// What an application starts with: $ATTNLENS_THREADS where it holds a number 1..kMaxComputeThreads
// (the test suites pin 1), else physicalCores() capped at 16; 1 where the build has no threads.
int defaultComputeThreads();
// Whether this build can run kernels on more than one thread.
bool parallelBuild();

// Runs body(begin, end) over [0, n) split into contiguous chunks of at least `grain` items, one per
// thread (at most computeThreads()); one call body(0, n) when that leaves a single chunk or when called
// from inside a parallel region. The first exception a chunk throws is rethrown here once every chunk
// has finished.
void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

// parallelFor over rows of `rowSize` values each, a chunk at least 32 768 values (row-wise norms and
// activations: less is not worth a team's start).
void parallelRows(int64_t rows, int64_t rowSize, const std::function<void(int64_t, int64_t)>& body);

// How many parallelFor calls so far ran on a team of two or more (tests check that a kernel shares out).
int64_t teamRegionsRun();

} // namespace attnlens
