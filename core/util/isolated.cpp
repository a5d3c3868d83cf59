#include "core/util/isolated.h"

#include "core/util/error.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>

// Sanitizer runtimes (and libFuzzer through them) run a callback when a report ends the process; present only
// in such builds.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace attnlens {

namespace {

void writeAll(int fd, const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += static_cast<size_t>(n);
    }
}

[[noreturn]] void child(int fd, const std::function<std::string()>& f) {
    // Die plainly on a fault: no inherited crash handler (the test framework's stack dump, a sanitizer's
    // report) runs in here, and no fuzzer saves its input as a crash of the parent when the child dies.
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM})
        ::signal(sig, SIG_DFL);
    if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
    std::string reply;
    try {
        reply = "O" + f();
    } catch (const std::exception& e) {
        reply = std::string("E") + e.what();
    } catch (...) {
        reply = "Eunknown exception";
    }
    writeAll(fd, reply);
    ::_exit(0); // no atexit handlers, no flushing of the parent's buffers
}

// Everything the child writes until it closes the pipe, or until the deadline (timedOut set).
std::string readUntilClosed(int fd, int timeoutMs, bool& timedOut) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    char buffer[65536];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timedOut = true;
            return out;
        }
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) continue; // the deadline check above ends it
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return out;
        out.append(buffer, static_cast<size_t>(n));
    }
}

} // namespace

namespace {

// AddressSanitizer's allocator (GCC 12's libasan) is not locked across fork: a child forked while another
// thread holds one of its locks waits forever on its first allocation. Seen as 10 s timeouts of a ChatML
// template's parse in test_text_page_llm under ASan (1 run in 6, three at once). In such builds a child that
// times out is started once more; release builds use glibc's malloc, which fork leaves consistent.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kTimeoutRetries = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int kTimeoutRetries = 1;
#else
constexpr int kTimeoutRetries = 0;
#endif
#else
constexpr int kTimeoutRetries = 0;
#endif

struct ChildOutcome {
    std::string reply;
    int status = 0;
    bool timedOut = false;
};

ChildOutcome runChild(const std::function<std::string()>& f, int timeoutMs, const std::string& what) {
    int fds[2];
    if (::pipe(fds) != 0) throw Error(what + ": no pipe for its renderer: " + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]), ::close(fds[1]);
        throw Error(what + ": its renderer did not start: " + std::strerror(errno));
    }
    if (pid == 0) {
        ::close(fds[0]);
        child(fds[1], f);
    }
    ::close(fds[1]);
    ChildOutcome out;
    out.reply = readUntilClosed(fds[0], timeoutMs, out.timedOut);
    ::close(fds[0]);
    if (out.timedOut) ::kill(pid, SIGKILL);
    while (::waitpid(pid, &out.status, 0) < 0 && errno == EINTR) {
    }
    return out;
}

} // namespace

std::string runIsolated(const std::function<std::string()>& f, int timeoutMs, const std::string& what) {
    ChildOutcome o = runChild(f, timeoutMs, what);
    for (int retry = 0; o.timedOut && retry < kTimeoutRetries; ++retry)
        o = runChild(f, timeoutMs, what);
    if (o.timedOut)
        throw Error(what + " took longer than " + std::to_string(timeoutMs / 1000) + " s (stopped)");
    if (!o.reply.empty() && o.reply[0] == 'O') return o.reply.substr(1);
    if (!o.reply.empty() && o.reply[0] == 'E') throw Error(what + " failed: " + o.reply.substr(1));
    const std::string how = WIFSIGNALED(o.status) ? "signal " + std::to_string(WTERMSIG(o.status))
                                                  : "exit status " + std::to_string(WEXITSTATUS(o.status));
    throw Error(what + " crashed its renderer (" + how +
                "): it nests or recurses too deeply, or asks for too much memory");
}

} // namespace attnlens
