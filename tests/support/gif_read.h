#pragma once
// Reads a GIF back with giflib (DGifSlurp) for the export tests: canvas size, frame count, each
// frame's delay and decoded RGB pixels. Header-only.

#include <QString>

#include <gif_lib.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace giftest {

struct Frame {
    int width = 0, height = 0, delay = 0; // delay in 1/100 s
    std::vector<uint8_t> rgb;             // width · height · 3
    std::array<uint8_t, 3> at(int x, int y) const {
        const size_t i = (static_cast<size_t>(y) * width + x) * 3;
        return {rgb[i], rgb[i + 1], rgb[i + 2]};
    }
};

struct Gif {
    QString error; // empty when read
    int width = 0, height = 0;
    bool loops = false; // NETSCAPE2.0 extension present
    std::vector<Frame> frames;
};

inline Gif read(const std::string& path) {
    Gif out;
    int code = 0;
    GifFileType* gif = DGifOpenFileName(path.c_str(), &code);
    if (!gif) {
        out.error = QString::fromLatin1(GifErrorString(code));
        return out;
    }
    if (DGifSlurp(gif) != GIF_OK) {
        out.error = QString::fromLatin1(GifErrorString(gif->Error));
        DGifCloseFile(gif, &code);
        return out;
    }
    out.width = gif->SWidth;
    out.height = gif->SHeight;
    for (int i = 0; i < gif->ImageCount; ++i) {
        const SavedImage& img = gif->SavedImages[i];
        for (int e = 0; e < img.ExtensionBlockCount; ++e)
            if (img.ExtensionBlocks[e].Function == APPLICATION_EXT_FUNC_CODE &&
                img.ExtensionBlocks[e].ByteCount == 11 &&
                std::string(reinterpret_cast<const char*>(img.ExtensionBlocks[e].Bytes), 11) == "NETSCAPE2.0")
                out.loops = true;
        Frame f;
        f.width = img.ImageDesc.Width;
        f.height = img.ImageDesc.Height;
        GraphicsControlBlock gcb{};
        if (DGifSavedExtensionToGCB(gif, i, &gcb) == GIF_OK) f.delay = gcb.DelayTime;
        const ColorMapObject* map = img.ImageDesc.ColorMap ? img.ImageDesc.ColorMap : gif->SColorMap;
        f.rgb.resize(static_cast<size_t>(f.width) * f.height * 3);
        for (int p = 0; p < f.width * f.height; ++p) {
            const GifColorType c = map->Colors[img.RasterBits[p]];
            f.rgb[p * 3] = c.Red;
            f.rgb[p * 3 + 1] = c.Green;
            f.rgb[p * 3 + 2] = c.Blue;
        }
        out.frames.push_back(std::move(f));
    }
    DGifCloseFile(gif, &code);
    return out;
}

} // namespace giftest
