#pragma once
// GifWriter: an animated GIF from RGB frames, through Debian's giflib (GIF89a, looping forever, one local
// colour table per frame: the frame's own colours when there are at most 256, else giflib's median-cut
// quantiser, which works on 5 bits per channel). Frames may differ in
// size from the first; each is drawn at the top-left of the first frame's canvas, clipped.
//
//   GifWriter gif("trajectory.gif", 20);     // 20 × 10 ms = 200 ms per frame
//   for (const RgbImage& f : frames) gif.addFrame(f);
//   gif.finish();                           // or the destructor (errors then are lost)
//
// Every failure (path not writable, empty frame, giflib error) throws attnlens::Error naming the path.

#include "core/export/colormap.h"

#include <filesystem>
#include <string>

struct GifFileType;

namespace attnlens {

class GifWriter {
public:
    // delayCentiseconds: how long each frame stays (hundredths of a second, GIF's unit).
    GifWriter(const std::filesystem::path& path, int delayCentiseconds);
    ~GifWriter();
    GifWriter(const GifWriter&) = delete;
    GifWriter& operator=(const GifWriter&) = delete;

    // delay < 0: the writer's default. The first frame fixes the canvas size.
    void addFrame(const RgbImage& frame, int delayCentiseconds = -1);
    int frames() const { return m_frames; }
    // Writes the trailer and closes the file; further frames throw.
    void finish();

private:
    [[noreturn]] void fail(const std::string& what, int code);

    std::filesystem::path m_path;
    GifFileType* m_gif = nullptr;
    int m_delay = 10;
    int m_width = 0, m_height = 0;
    int m_frames = 0;
};

} // namespace attnlens
