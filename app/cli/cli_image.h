#pragma once
// Image loading for CLI subcommands. Third-party decoders (libpng, libjpeg, OpenCV's logger) print
// their own diagnostics on stderr, but the CLI contract allows exactly one "error: ..." line. The CLI
// is single-threaded, so stderr is redirected to a temporary file around decoding; when decoding fails,
// the decoder's first line is appended to our error, and otherwise its chatter is dropped.

#include "core/util/error.h"
#include "core/vision/image_io.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace cli {

inline attnlens::ImageU8 loadImageQuietly(const std::filesystem::path& path) {
    std::fflush(stderr);
    std::FILE* sink = std::tmpfile();
    const int saved = sink ? dup(2) : -1;
    if (!sink || saved < 0 || dup2(fileno(sink), 2) < 0) { // cannot redirect: load loudly
        if (saved >= 0) close(saved);
        if (sink) std::fclose(sink);
        return attnlens::loadImage(path);
    }
    auto restore = [&] {
        std::fflush(stderr);
        dup2(saved, 2);
        close(saved);
    };
    try {
        attnlens::ImageU8 image = attnlens::loadImage(path);
        restore();
        std::fclose(sink);
        return image;
    } catch (const attnlens::Error& e) {
        restore();
        std::rewind(sink);
        char line[256] = {0};
        std::string said;
        while (said.empty() && std::fgets(line, sizeof line, sink)) {
            said = line;
            while (!said.empty() && (said.back() == '\n' || said.back() == '\r' || said.back() == ' '))
                said.pop_back();
        }
        std::fclose(sink);
        if (said.empty()) throw;
        throw attnlens::Error(std::string(e.what()) + " [decoder: " + said + "]");
    } catch (...) {
        restore();
        std::fclose(sink);
        throw;
    }
}

} // namespace cli
