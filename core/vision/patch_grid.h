#pragma once
// Patch-grid geometry of a vision transformer input: patch index ↔ rectangle, both in model-input
// pixels and in the ORIGINAL image's pixels (the resize undone). Patches are numbered row-major
// (top-left first, x fastest); the token of patch i is i + prefixTokens(): token 0 is CLS, then come the
// register tokens of DINOv2 with registers (none elsewhere); SigLIP has no CLS (prefixTokens() 0).
//
// The mapping follows PIL's resize convention (pixel centres: input x + 0.5 = (output x + 0.5) · sx),
// so the output pixel range [a, b) covers the original range [a · sx, b · sx) with sx = imageW / inputW.
// A patch grid that does not divide the input drops the remainder, as the strided convolution does.
// With a centre crop (DeiT) the model input covers only `region` of the original image (in image
// pixels; it may reach outside the image where the crop was padded): the mapping is then
// image x = region.x + input x · region.width / inputW.

#include <string>

namespace attnlens {

struct RectF {
    double x = 0, y = 0, width = 0, height = 0;
    bool contains(double px, double py) const {
        return px >= x && px < x + width && py >= y && py < y + height;
    }
};

class PatchGrid {
public:
    PatchGrid() = default;
    PatchGrid(int imageWidth, int imageHeight, int inputWidth, int inputHeight, int patch);
    PatchGrid(int imageWidth, int imageHeight, int inputWidth, int inputHeight, int patch, RectF region,
              int prefixTokens = 1);

    int rows() const { return m_rows; }
    int cols() const { return m_cols; }
    int count() const { return m_rows * m_cols; }
    int patch() const { return m_patch; }
    int imageWidth() const { return m_imageWidth; }
    int imageHeight() const { return m_imageHeight; }
    int inputWidth() const { return m_inputWidth; }
    int inputHeight() const { return m_inputHeight; }
    // The model input's extent in original-image pixels (the whole image unless cropped).
    RectF region() const { return m_region; }
    // region() as fractions of the image's width and height; {} (all 0) when it is the whole image.
    RectF regionFraction() const {
        if (!cropped()) return {};
        return {m_region.x / m_imageWidth, m_region.y / m_imageHeight, m_region.width / m_imageWidth,
                m_region.height / m_imageHeight};
    }
    bool cropped() const {
        return m_region.x != 0 || m_region.y != 0 || m_region.width != m_imageWidth ||
               m_region.height != m_imageHeight;
    }

    int index(int row, int col) const { return row * m_cols + col; }
    int row(int index) const { return index / m_cols; }
    int col(int index) const { return index % m_cols; }
    int prefixTokens() const { return m_prefix; } // CLS and the registers; 0 for SigLIP (no CLS)
    bool hasCls() const { return m_prefix > 0; }
    int registers() const { return m_prefix > 0 ? m_prefix - 1 : 0; }
    int tokenOfPatch(int index) const { return index + m_prefix; }
    int patchOfToken(int token) const { return token - m_prefix; } // negative for CLS and the registers

    // A short name for a token: "CLS" for token 0, "reg<k>" for register k, else "r<row>c<col>" of its
    // patch (0-based).
    std::string tokenLabel(int token) const;

    RectF inputRect(int index) const; // model-input pixels
    RectF imageRect(int index) const; // original-image pixels
    // The patch covering an original-image point, or -1 outside the grid.
    int patchAt(double imageX, double imageY) const;

private:
    int m_imageWidth = 0, m_imageHeight = 0, m_inputWidth = 0, m_inputHeight = 0;
    int m_patch = 1, m_rows = 0, m_cols = 0, m_prefix = 1;
    RectF m_region;
};

} // namespace attnlens
