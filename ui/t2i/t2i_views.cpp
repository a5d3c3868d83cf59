// TextToImagePage: the controls kept in step with the document, the views drawn, the exports.

#include "core/diffusion/t2i_json.h"
#include "core/diffusion/unet_maps.h"
#include "core/export/npy.h"
#include "core/util/error.h"
#include "ui/diffusion/u_shape_view.h"
#include "ui/t2i/t2i_page.h"
#include "ui/vision/map_grid_view.h"
#include "ui/vision/patch_image_view.h"
#include "ui/widgets/candidate_bars.h"
#include "ui/widgets/map_controls.h"
#include "ui/widgets/page_parts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSlider>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>

namespace attnlens::ui {

namespace {

// down_blocks.1.attentions.0.transformer_blocks.0.attn2 → D1.0 (·t1 for a second transformer layer).
QString shortName(const UNetAttentionInfo& l) {
    const QStringList p = QString::fromStdString(l.name).split(QLatin1Char('.'));
    QString name = p.value(0).startsWith(QLatin1String("mid")) ? QStringLiteral("mid")
                   : p.size() >= 4 ? (p[0].startsWith(QLatin1String("down")) ? QStringLiteral("D")
                                                                             : QStringLiteral("U")) +
                                         p[1] + QLatin1Char('.') + p[3]
                                   : QString::fromStdString(l.name);
    const int t = p.indexOf(QStringLiteral("transformer_blocks"));
    if (t >= 0 && p.value(t + 1) != QLatin1String("0")) name += QStringLiteral("·t") + p.value(t + 1);
    return name;
}

void setItemEnabled(QComboBox* box, int index, bool enabled) {
    if (auto* m = qobject_cast<QStandardItemModel*>(box->model()))
        if (auto* item = m->item(index)) item->setEnabled(enabled);
}

} // namespace

void TextToImagePage::syncModelControls() {
    const auto& pipe = m_doc->pipeline();
    const int current = m_size->currentData().toInt();
    const QSignalBlocker b1(m_size), b2(m_scheduler);
    m_size->clear();
    m_scheduler->clear();
    if (!pipe) return;
    const int own = pipe->defaultSize(), mult = pipe->sizeMultiple();
    m_size->addItem(tr("%1×%1 (the model's)").arg(own), 0);
    // 256 and 512 where the model can make them: self-attention over at most 64×64 latents (SD 1.x at 512;
    // 4096² weights per head), and not far beyond the size it was trained at
    const int factor = pipe->vae().config().scaleFactor();
    for (int s : {256, 512})
        if (s != own && s % mult == 0 && s / factor <= 64 && s <= 4 * own)
            m_size->addItem(tr("%1×%1").arg(s), s);
    m_size->setCurrentIndex(std::max(0, m_size->findData(current)));
    const QString folder = QString::fromStdString(pipe->schedulerClass());
    m_scheduler->addItem(pipe->folderSampler() ? tr("the folder's (%1)").arg(folder)
                                               : tr("the folder's (%1: not supported)").arg(folder),
                         -1);
    const std::pair<SamplerKind, QString> kinds[] = {{SamplerKind::Pndm, tr("PNDM (PLMS)")},
                                                     {SamplerKind::Ddim, tr("DDIM")},
                                                     {SamplerKind::Euler, tr("Euler")},
                                                     {SamplerKind::DpmSolver, tr("DPM-Solver++")}};
    for (const auto& [kind, text] : kinds)
        m_scheduler->addItem(text, static_cast<int>(kind));
}

void TextToImagePage::syncRunControls() {
    const auto layers = m_doc->crossLayers();
    QStringList names{tr("All cross-attention layers (DAAM)")};
    int maxHeads = 0;
    for (const auto& l : layers) {
        names << tr("%1 · %2×%3 · %n head(s)", nullptr, l.heads).arg(shortName(l)).arg(l.height).arg(l.width);
        maxHeads = std::max(maxHeads, l.heads);
    }
    QStringList shown;
    for (int i = 0; i < m_layer->count(); ++i)
        shown << m_layer->itemText(i);
    if (shown != names) {
        const QSignalBlocker b(m_layer);
        m_layer->clear();
        m_layer->addItems(names);
        QStringList uLabels;
        for (const auto& l : layers)
            uLabels << shortName(l);
        m_uView->setLayers(layers, uLabels);
    }
    if (m_head->count() != 3 + maxHeads) {
        const QSignalBlocker b(m_head);
        m_head->clear();
        m_head->addItems({tr("Mean of heads"), tr("Max of heads"), tr("Min of heads")});
        for (int h = 0; h < maxHeads; ++h)
            m_head->addItem(tr("Head %1").arg(h));
    }
    const bool all = m_doc->allHeads();
    for (int i = 1; i < m_head->count(); ++i)
        setItemEnabled(m_head, i, all);
    m_head->setToolTip(all ? QString()
                           : tr("This run kept the mean over heads: tick “Keep every head” and "
                                "generate to see one head, their max or min"));
    m_valueWeighted->setEnabled(m_doc->hasValueWeighted());
    m_valueWeighted->setToolTip(
        m_doc->hasValueWeighted()
            ? valueWeightedTip(tr("token"),
                               tr("Per head before the fusion; the pixel's self-attention map follows."))
            : tr("This run kept the weights only: tick “Keep value-weighted maps too” and generate"));
    setItemEnabled(m_half, 1, m_doc->guided());
    setItemEnabled(m_half, 2, m_doc->guided());
    const auto unet = m_doc->unetLayers();
    QStringList selfNames, selfShown;
    for (const auto& l : unet)
        if (!l.cross) selfNames << tr("%1 · %2×%3").arg(shortName(l)).arg(l.height).arg(l.width);
    for (int i = 0; i < m_selfLayer->count(); ++i)
        selfShown << m_selfLayer->itemText(i);
    if (selfShown != selfNames) { // other layers, or the same at another size
        const QSignalBlocker b(m_selfLayer);
        m_selfLayer->clear();
        int i = 0;
        for (size_t l = 0; l < unet.size(); ++l)
            if (!unet[l].cross) m_selfLayer->addItem(selfNames[i++], static_cast<int>(l));
    }
}

void TextToImagePage::syncControls() {
    const QSignalBlocker b1(m_allSteps), b2(m_layer), b3(m_head), b4(m_half), b5(m_showSpecial),
        b6(m_selfLayer), b7(m_valueWeighted);
    m_allSteps->setChecked(m_doc->allSteps());
    m_layer->setCurrentIndex(std::clamp(m_doc->layer() + 1, 0, std::max(0, m_layer->count() - 1)));
    const HeadSelection& h = m_doc->heads();
    m_head->setCurrentIndex(h.head >= 0                   ? std::min(3 + h.head, m_head->count() - 1)
                            : h.fusion == HeadFusion::Max ? 1
                            : h.fusion == HeadFusion::Min ? 2
                                                          : 0);
    m_half->setCurrentIndex(static_cast<int>(m_doc->half()));
    m_showSpecial->setChecked(m_doc->showSpecial());
    m_valueWeighted->setChecked(m_doc->valueWeightedSwitch());
    m_selfLayer->setCurrentIndex(std::max(0, m_selfLayer->findData(m_doc->selfLayer())));
}

void TextToImagePage::refreshStep() {
    const int made = m_doc->completedSteps(), step = m_doc->shownStep();
    {
        const QSignalBlocker b(m_timeline);
        m_timeline->setRange(0, std::max(0, made - 1));
        m_timeline->setValue(step);
    }
    m_timeline->setEnabled(made > 1);
    if (made == 0) {
        m_stepLabel->setText(m_doc->running() ? tr("starting…") : tr("no run"));
    } else {
        const int total = std::max(made, m_doc->plannedSteps());
        QString text = tr("step %1 / %2 · t = %3")
                           .arg(step)
                           .arg(total - 1)
                           .arg(m_doc->run().steps[size_t(step)].timestep);
        if (!m_doc->stepDecoded(step)) text += tr(" · latent preview");
        if (m_doc->allSteps()) text += tr(" · map: all %n step(s)", nullptr, made);
        m_stepLabel->setText(text);
    }
    m_decodeStep->setEnabled(made > 0 && !m_doc->stepDecoded(step));
}

void TextToImagePage::updatePromptNote() {
    const auto& pipe = m_doc->pipeline();
    if (!pipe) return m_promptNote->clear();
    const int tokens = static_cast<int>(pipe->tokenizer().encode(m_prompt->text().toStdString()).ids.size());
    if (tokens <= 77) {
        m_promptNote->setText(tr("%1 of 77 tokens").arg(tokens));
        m_promptNote->setStyleSheet({});
        return;
    }
    m_promptNote->setText(
        tr("%1 tokens: truncated at 77 as the pipeline does — the text encoder never sees the "
           "last %2 piece(s)")
            .arg(tokens)
            .arg(tokens - 77));
    m_promptNote->setStyleSheet(QStringLiteral("color: %1").arg(errorColor(palette()).name()));
}

void TextToImagePage::refreshViewsSoon() {
    if (!m_viewsTimer) {
        m_viewsTimer = new QTimer(this);
        m_viewsTimer->setSingleShot(true);
        connect(m_viewsTimer, &QTimer::timeout, this, &TextToImagePage::refreshViews);
    }
    if (!m_doc->running() || !m_viewsDrawn.isValid() || m_viewsDrawn.elapsed() >= kRunRefreshMs)
        return refreshViews();
    if (!m_viewsTimer->isActive())
        m_viewsTimer->start(kRunRefreshMs - static_cast<int>(m_viewsDrawn.elapsed()));
}

void TextToImagePage::refreshViews() {
    m_viewsDrawn.start();
    syncRunControls();
    if (!m_doc->hasRun()) {
        m_view->clear();
        m_compare->hide();
        m_wordStrip->clear();
        m_stepStrip->clear();
        m_uView->setTiles({});
        refreshPixelPanel();
        return;
    }
    const int h = m_doc->imageHeight(), w = m_doc->imageWidth();
    const int cell = m_doc->pipeline() ? m_doc->pipeline()->vae().config().scaleFactor() : 1;
    const PatchGrid grid(w, h, w, h, std::max(1, cell));
    const auto draw = [this](const T2iMapQuery& q, int pictureStep = -1) {
        try {
            return toQImage(m_doc->overlay(q, pictureStep));
        } catch (const Error& e) {
            showError(QString::fromUtf8(e.what()));
            return toQImage(m_doc->overlay(T2iMapQuery{}, pictureStep));
        }
    };
    const T2iMapQuery q = m_doc->query(m_doc->word());
    m_view->setPicture(draw(q), grid);
    std::vector<int> pixel;
    if (const auto p = m_doc->pixel())
        pixel.push_back(p->first / grid.patch() * grid.cols() + p->second / grid.patch());
    m_view->setSelection(pixel, false);

    const auto& words = m_doc->words();
    if (!m_doc->compared().empty() && m_doc->word() >= 0) {
        std::vector<QImage> tiles{draw(q)};
        QStringList titles{QString::fromStdString(words[size_t(m_doc->word())].text)};
        for (int c : m_doc->compared()) {
            tiles.push_back(draw(m_doc->query(c)));
            titles << QString::fromStdString(words[size_t(c)].text);
        }
        m_compare->setTiles(std::move(tiles), titles);
        m_compare->show();
    } else {
        m_compare->hide();
    }
    if (m_tabs->currentWidget() == m_wordStrip) {
        std::vector<QImage> tiles;
        QStringList titles;
        const auto visible = m_doc->visibleWords();
        for (int v : visible) {
            tiles.push_back(draw(m_doc->query(v)));
            titles << QString::fromStdString(words[size_t(v)].text);
        }
        m_wordStrip->setTiles(std::move(tiles), titles);
        const auto it = std::find(visible.begin(), visible.end(), m_doc->word());
        m_wordStrip->setSelected(it == visible.end() ? -1 : static_cast<int>(it - visible.begin()));
    } else if (m_tabs->currentWidget() == m_stepStrip) {
        std::vector<QImage> tiles;
        QStringList titles;
        for (int s = 0; s < m_doc->completedSteps(); ++s) {
            T2iMapQuery at = q;
            at.step = s;
            tiles.push_back(draw(q.tokens.empty() ? T2iMapQuery{} : at, s));
            titles << tr("%1 · t=%2").arg(s).arg(m_doc->run().steps[size_t(s)].timestep);
        }
        m_stepStrip->setTiles(std::move(tiles), titles);
        m_stepStrip->setSelected(m_doc->allSteps() ? -1 : m_doc->shownStep());
    } else {
        std::vector<QImage> tiles;
        for (int l = 0; l < m_uView->count(); ++l) {
            T2iMapQuery at = q;
            at.layer = l;
            tiles.push_back(draw(q.tokens.empty() ? T2iMapQuery{} : at));
        }
        m_uView->setTiles(std::move(tiles));
        m_uView->setSelected(m_doc->layer());
    }
    refreshPixelPanel();
}

void TextToImagePage::refreshPixelPanel() {
    const auto pixel = m_doc->pixel();
    m_pixelBars->setVisible(pixel && m_doc->hasRun());
    if (!pixel || !m_doc->hasRun()) {
        m_pixelBars->setCandidates({}, -1);
        m_selfView->clear();
        m_pixelLabel->setText(tr("Click the image: which words that pixel attends to, and where it looks."));
        return;
    }
    const auto [row, col] = *pixel;
    const auto& words = m_doc->words();
    std::vector<TokenCandidate> bars;
    try {
        const std::vector<float> weights = m_doc->pixelWords();
        for (int v : m_doc->visibleWords())
            bars.push_back({v, words[size_t(v)].text, 0.0f, weights[size_t(v)]});
        std::stable_sort(bars.begin(), bars.end(),
                         [](const auto& a, const auto& b) { return a.prob > b.prob; });
        if (bars.size() > 10) bars.resize(10);
    } catch (const Error& e) {
        showError(QString::fromUtf8(e.what()));
    }
    m_pixelBars->setCandidates(std::move(bars), m_doc->word());
    m_pixelLabel->setText(tr("Pixel (%1, %2): the words it attends to (%3)")
                              .arg(row)
                              .arg(col)
                              .arg(QString::fromLatin1(t2iHalfName(m_doc->half()).data()) +
                                   (m_doc->valueWeighted() ? tr(", value-weighted") : QString())));
    const UNetAttentionMap* self = m_doc->selfAttention();
    if (!self) {
        m_selfView->clear();
        m_selfView->setPlaceholderText(m_doc->running() ? tr("after the run") : tr("computing…"));
        return;
    }
    HeadSelection heads = m_doc->heads();
    if (heads.head >= self->info.heads) heads = {};
    try {
        const RowMatrix map = unetRegionMap(*self, PixelRegion::pixel(row, col), m_doc->imageHeight(),
                                            m_doc->imageWidth(), heads, false, m_doc->valueWeighted());
        OverlayOptions o = m_doc->overlayOptions();
        o.smooth = false;
        const int w = m_doc->imageWidth(), h = m_doc->imageHeight();
        const PatchGrid grid(w, h, w, h, std::max(1, w / self->info.width));
        m_selfView->setPicture(toQImage(renderOverlay(m_doc->picture(), map, o)), grid);
        m_selfView->setSelection({row / grid.patch() * grid.cols() + col / grid.patch()}, false);
    } catch (const Error& e) {
        m_selfView->clear();
        showError(QString::fromUtf8(e.what()));
    }
}

// --- exports ----------------------------------------------------------------------------------------------

QString TextToImagePage::exportBaseName() const {
    QString words = m_doc->runSettings().prompt.left(40).simplified();
    words.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9]+")), QStringLiteral("-"));
    return m_doc->modelName() + QLatin1Char('-') + words;
}

bool TextToImagePage::exportImage(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        if (!m_doc->hasRun()) throw Error("nothing generated yet");
        writePng(p.toStdString(), m_doc->hasImage() ? t2iImageU8(m_doc->run().image) : m_doc->picture());
    });
}

bool TextToImagePage::exportView(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        if (!m_doc->hasRun()) throw Error("nothing generated yet");
        writePng(p.toStdString(), m_doc->overlay(m_doc->word()));
    });
}

bool TextToImagePage::exportWordStrip(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        m_tabs->setCurrentWidget(m_wordStrip);
        if (m_wordStrip->count() == 0) throw Error("nothing generated yet");
        if (!m_wordStrip->renderImage(256).save(p, "PNG")) throw Error("could not write " + p.toStdString());
    });
}

bool TextToImagePage::exportStepStrip(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        m_tabs->setCurrentWidget(m_stepStrip);
        if (m_stepStrip->count() == 0) throw Error("nothing generated yet");
        if (!m_stepStrip->renderImage(256).save(p, "PNG")) throw Error("could not write " + p.toStdString());
    });
}

bool TextToImagePage::exportWordMaps(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        if (!m_doc->hasRun()) throw Error("nothing generated yet");
        const auto words = m_doc->visibleWords();
        const int64_t h = m_doc->imageHeight(), w = m_doc->imageWidth();
        Tensor stack({static_cast<int64_t>(words.size()), h, w});
        for (size_t i = 0; i < words.size(); ++i) {
            const RowMatrix m = m_doc->wordMap(words[i]);
            std::copy(m.data(), m.data() + h * w, stack.data() + static_cast<int64_t>(i) * h * w);
        }
        writeNpy(p.toStdString(), stack);
    });
}

bool TextToImagePage::exportRun(const QString& path) {
    return exportWith(path, [this](const QString& p) {
        if (!m_doc->hasRun()) throw Error("nothing generated yet");
        if (m_doc->run().finalLatents.empty())
            throw Error("the run stopped before its last step: export its image or maps instead");
        T2iRequest r;
        r.steps = m_doc->runSettings().steps;
        r.guidance = static_cast<float>(m_doc->runSettings().guidance);
        writeT2iRunJson(p.toStdString(), m_doc->run(), r);
    });
}

} // namespace attnlens::ui
