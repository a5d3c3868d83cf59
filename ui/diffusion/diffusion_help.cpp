// Help → What am I looking at? for the Diffusion page.
#include "ui/diffusion/diffusion_page.h"

namespace attnlens::ui {

QString diffusionHelpTitle() {
    return QObject::tr("Diffusion — U-Net attention while denoising");
}

QString diffusionHelpText() {
    return QObject::tr(
        "<p>A diffusion model starts from pure noise and removes a little of it at every step; a U-Net "
        "predicts "
        "the noise. The U-Net first shrinks the picture (the contracting path, left of the U), works at the "
        "smallest size at the bottom, and grows it back (the expansive path, right), with skip connections "
        "across.</p>"
        "<p>Some blocks contain <b>spatial self-attention</b>: every pixel of that block's feature map (a "
        "query) "
        "looks at every other pixel. The U shows where those layers sit and their sizes; pick one, then "
        "click a "
        "point on the picture to make it the query. The map shows where that point looks, over x̂0 (the "
        "model's "
        "current guess of the final image) or x_t (the noisy input of this step).</p>"
        "<p>The timeline steps from noise (left) to the image (right); Alt+Left / Alt+Right move one step. "
        "Early "
        "steps attend broadly, later ones to structure that has already formed.</p>");
}

} // namespace attnlens::ui
