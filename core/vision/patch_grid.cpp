#include "core/vision/patch_grid.h"

#include "core/util/error.h"

#include <cmath>
#include <string>

namespace attnlens {

PatchGrid::PatchGrid(int imageWidth, int imageHeight, int inputWidth, int inputHeight, int patch)
    : PatchGrid(imageWidth, imageHeight, inputWidth, inputHeight, patch,
                RectF{0.0, 0.0, double(imageWidth), double(imageHeight)}) {}

PatchGrid::PatchGrid(int imageWidth, int imageHeight, int inputWidth, int inputHeight, int patch,
                     RectF region, int prefixTokens)
    : m_imageWidth(imageWidth), m_imageHeight(imageHeight), m_inputWidth(inputWidth),
      m_inputHeight(inputHeight), m_patch(patch), m_prefix(prefixTokens), m_region(region) {
    if (prefixTokens < 0) throw Error("patch grid: a negative number of tokens before the patches");
    if (patch < 1 || inputWidth < patch || inputHeight < patch || imageWidth < 1 || imageHeight < 1)
        throw Error("patch grid: input " + std::to_string(inputWidth) + "×" + std::to_string(inputHeight) +
                    " holds no " + std::to_string(patch) + "-pixel patch");
    if (!(region.width > 0) || !(region.height > 0))
        throw Error("patch grid: the input region must have a positive size");
    m_rows = inputHeight / patch;
    m_cols = inputWidth / patch;
}

std::string PatchGrid::tokenLabel(int token) const {
    if (token == 0 && m_prefix > 0) return "CLS";
    if (token > 0 && token < m_prefix) return "reg" + std::to_string(token - 1);
    const int index = patchOfToken(token);
    if (index < 0 || index >= count())
        throw Error("token " + std::to_string(token) + " outside the grid of " + std::to_string(count()) +
                    " patches");
    return "r" + std::to_string(row(index)) + "c" + std::to_string(col(index));
}

RectF PatchGrid::inputRect(int index) const {
    if (index < 0 || index >= count())
        throw Error("patch index " + std::to_string(index) + " outside the grid of " +
                    std::to_string(count()));
    return {double(col(index) * m_patch), double(row(index) * m_patch), double(m_patch), double(m_patch)};
}

RectF PatchGrid::imageRect(int index) const {
    const RectF r = inputRect(index);
    const double sx = m_region.width / m_inputWidth;
    const double sy = m_region.height / m_inputHeight;
    return {m_region.x + r.x * sx, m_region.y + r.y * sy, r.width * sx, r.height * sy};
}

int PatchGrid::patchAt(double imageX, double imageY) const {
    const double ix = (imageX - m_region.x) * m_inputWidth / m_region.width;
    const double iy = (imageY - m_region.y) * m_inputHeight / m_region.height;
    if (!(ix >= 0) || !(iy >= 0)) return -1;
    const int c = static_cast<int>(std::floor(ix / m_patch));
    const int r = static_cast<int>(std::floor(iy / m_patch));
    if (c >= m_cols || r >= m_rows) return -1;
    return index(r, c);
}

} // namespace attnlens
