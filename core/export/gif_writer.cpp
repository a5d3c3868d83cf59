#include "core/export/gif_writer.h"

#include "core/util/error.h"

#include <fcntl.h>
#include <gif_lib.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace attnlens {

namespace {

// The frame's own colours as the palette when there are at most 256 of them.
bool exactPalette(const std::vector<GifByteType>& r, const std::vector<GifByteType>& g,
                  const std::vector<GifByteType>& b, std::vector<GifByteType>& index,
                  std::array<GifColorType, 256>& palette) {
    std::unordered_map<uint32_t, GifByteType> seen;
    for (size_t i = 0; i < r.size(); ++i) {
        const uint32_t key = (uint32_t{r[i]} << 16) | (uint32_t{g[i]} << 8) | b[i];
        auto it = seen.find(key);
        if (it == seen.end()) {
            if (seen.size() == palette.size()) return false;
            const auto slot = static_cast<GifByteType>(seen.size());
            palette[slot] = {r[i], g[i], b[i]};
            it = seen.emplace(key, slot).first;
        }
        index[i] = it->second;
    }
    return true;
}

} // namespace

GifWriter::GifWriter(const std::filesystem::path& path, int delayCentiseconds)
    : m_path(path), m_delay(std::clamp(delayCentiseconds, 1, 65535)) {
    // Opened here rather than by EGifOpenFileName, which creates files readable by their owner only;
    // this gives the usual permissions (0666 less the umask), like every other export.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        throw Error("GIF " + m_path.string() + ": cannot create the file (" + std::strerror(errno) + ")");
    int code = 0;
    m_gif = EGifOpenFileHandle(fd, &code); // owns fd from here
    if (m_gif == nullptr) {
        ::close(fd);
        fail("cannot start the file", code);
    }
    EGifSetGifVersion(m_gif, true); // GIF89a: delays and the loop extension
}

GifWriter::~GifWriter() {
    if (m_gif != nullptr) {
        int code = 0;
        EGifCloseFile(m_gif, &code);
    }
}

void GifWriter::fail(const std::string& what, int code) {
    const char* reason = GifErrorString(code);
    throw Error("GIF " + m_path.string() + ": " + what +
                (reason ? std::string(" (") + reason + ")" : std::string()));
}

void GifWriter::addFrame(const RgbImage& frame, int delayCentiseconds) {
    if (m_gif == nullptr) throw Error("GIF " + m_path.string() + ": the file is already finished");
    if (frame.width <= 0 || frame.height <= 0 ||
        frame.pixels.size() != static_cast<size_t>(frame.width) * frame.height * 3)
        throw Error("GIF " + m_path.string() + ": frame " + std::to_string(m_frames) +
                    " is empty or malformed");
    if (frame.width > 65535 || frame.height > 65535)
        throw Error("GIF " + m_path.string() + ": a frame is larger than 65535 px");
    if (m_frames == 0) {
        m_width = frame.width;
        m_height = frame.height;
        if (EGifPutScreenDesc(m_gif, m_width, m_height, 8, 0, nullptr) == GIF_ERROR)
            fail("cannot write the header", m_gif->Error);
        // NETSCAPE2.0 application extension: loop forever.
        static const char kApp[] = "NETSCAPE2.0";
        const std::array<GifByteType, 3> loop{1, 0, 0};
        if (EGifPutExtensionLeader(m_gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
            EGifPutExtensionBlock(m_gif, 11, kApp) == GIF_ERROR ||
            EGifPutExtensionBlock(m_gif, static_cast<int>(loop.size()), loop.data()) == GIF_ERROR ||
            EGifPutExtensionTrailer(m_gif) == GIF_ERROR)
            fail("cannot write the loop extension", m_gif->Error);
    }
    const int w = std::min(frame.width, m_width), h = std::min(frame.height, m_height);
    // Split the (clipped) frame into planes and let giflib's median cut choose 256 colours.
    const size_t n = static_cast<size_t>(w) * h;
    std::vector<GifByteType> red(n), green(n), blue(n), index(n);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const uint8_t* p = &frame.pixels[(static_cast<size_t>(y) * frame.width + x) * 3];
            const size_t i = static_cast<size_t>(y) * w + x;
            red[i] = p[0];
            green[i] = p[1];
            blue[i] = p[2];
        }
    // A frame of at most 256 colours keeps them exactly; otherwise giflib's median cut (on 5 bits per
    // channel) chooses the palette.
    std::array<GifColorType, 256> palette{};
    if (!exactPalette(red, green, blue, index, palette)) {
        int colours = 256;
        if (GifQuantizeBuffer(static_cast<unsigned>(w), static_cast<unsigned>(h), &colours, red.data(),
                              green.data(), blue.data(), index.data(), palette.data()) == GIF_ERROR)
            fail("cannot quantise frame " + std::to_string(m_frames), D_GIF_ERR_NOT_ENOUGH_MEM);
    }
    ColorMapObject* map = GifMakeMapObject(256, palette.data());
    if (map == nullptr) fail("out of memory", E_GIF_ERR_NOT_ENOUGH_MEM);

    GraphicsControlBlock gcb{};
    gcb.DisposalMode = DISPOSE_DO_NOT;
    gcb.DelayTime = delayCentiseconds < 0 ? m_delay : std::clamp(delayCentiseconds, 1, 65535);
    gcb.TransparentColor = NO_TRANSPARENT_COLOR;
    std::array<GifByteType, 4> ext{};
    EGifGCBToExtension(&gcb, ext.data());
    bool ok = EGifPutExtension(m_gif, GRAPHICS_EXT_FUNC_CODE, static_cast<int>(ext.size()), ext.data()) !=
                  GIF_ERROR &&
              EGifPutImageDesc(m_gif, 0, 0, w, h, false, map) != GIF_ERROR;
    for (int y = 0; ok && y < h; ++y)
        ok = EGifPutLine(m_gif, &index[static_cast<size_t>(y) * w], w) != GIF_ERROR;
    GifFreeMapObject(map);
    if (!ok) fail("cannot write frame " + std::to_string(m_frames), m_gif->Error);
    ++m_frames;
}

void GifWriter::finish() {
    if (m_gif == nullptr) return;
    if (m_frames == 0) throw Error("GIF " + m_path.string() + ": no frame to write");
    int code = 0;
    GifFileType* gif = m_gif;
    m_gif = nullptr;
    if (EGifCloseFile(gif, &code) == GIF_ERROR) fail("cannot finish the file", code);
}

} // namespace attnlens
