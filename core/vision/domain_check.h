#pragma once
// Does a picture look like what a classifier was trained on? For the built-in Fashion-MNIST ViT: greyscale,
// square, a light garment on a black background. A picture that is not (a colour photo, a document, a wide
// banner) still gets a prediction, and a confident-looking one: the Vision page says so beside it.
//
//   DomainCheck c = checkFashionMnistLikeness(image, top.probability);
//   if (c.mismatch()) show(c.reasons);   // "in colour", "light background", "6.0:1, not square", ...

#include "core/tensor/image.h"

#include <string>
#include <vector>

namespace attnlens {

struct DomainCheck {
    std::vector<std::string>
        reasons; // short clauses: "in colour", "light background", "unsure (top class 43 %)"
    bool mismatch() const { return !reasons.empty(); }
};

// Below this top-class probability the prediction is called unsure whatever the picture looks like.
inline constexpr float kLowTopProbability = 0.5f;

// Colour: mean channel spread over 12 levels; background: the outer tenth of the picture brighter than 70
// on average (Fashion-MNIST's is 0); shape: one side over 1.6 times the other; unsure: top < 0.5.
DomainCheck checkFashionMnistLikeness(const ImageU8& image, float topProbability);

} // namespace attnlens
