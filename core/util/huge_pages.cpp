#include "core/util/huge_pages.h"

#include <cstdlib>
#include <fstream>
#include <string>

#if defined(__linux__) && defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>
#endif

namespace attnlens {

void useHugePages(char** argv) {
#if defined(__linux__) && defined(__GLIBC__)
    if (std::getenv("ATTNLENS_NO_HUGE_PAGES")) return;
    const char* set = std::getenv("GLIBC_TUNABLES");
    std::string tunables = set ? set : "";
    if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string modes;
    if (!std::getline(thp, modes) || modes.find("[never]") != std::string::npos) return;
    tunables += std::string(tunables.empty() ? "" : ":") + "glibc.malloc.hugetlb=1";
    if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
    execv("/proc/self/exe", argv);
    // still here: the program goes on as it was started
    if (set)
        setenv("GLIBC_TUNABLES", set, 1);
    else
        unsetenv("GLIBC_TUNABLES");
#else
    (void)argv;
#endif
}

void keepLargeBuffers() {
#if defined(__linux__) && defined(__GLIBC__)
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

void reserveHeap(std::size_t bytes) {
    auto* block = static_cast<volatile char*>(std::malloc(bytes));
    if (block == nullptr) return;
    for (std::size_t i = 0; i < bytes; i += 4096)
        block[i] = 0; // volatile: every page is touched, not optimised away
    std::free(const_cast<char*>(block));
}

} // namespace attnlens
