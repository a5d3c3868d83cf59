#pragma once
// TextLinesView: the Text page's Lines tab — BertViz's head view of the shown layer: the visible tokens on
// both sides, one colour per head (the selected head alone, or all of them); hover or click a token to focus
// it. Drawn by ui/render/attention_lines (the same scene as Translate's Lines view). Object name "lines".
//
// Long texts (issue 40): each head is kept as its links (a few per query), not its map; above
// kSyncTokens tokens, or when the run keeps its attention on demand, they are made on a lane of their own
// (the labels show at once, the lines when ready), and only the part on screen is painted.

#include "ui/render/attention_lines.h"
#include "ui/text/text_document.h"
#include "ui/widgets/latest_lane.h"

#include <QWidget>

#include <memory>

namespace attnlens::ui {

class HeadToggleBar;

class TextLinesView : public QWidget {
public:
    static constexpr int kSyncTokens = 256; // up to here the links are made on the GUI thread
    // `toggles` (may be null): the head switches above the view; they follow the page's head selector.
    TextLinesView(TextDocument* doc, HeadToggleBar* toggles, QWidget* parent);
    void refresh(); // after the run, the step or the selection changed
    const AttentionLineGeometry& lineGeometry() const { return m_geometry; } // where the labels are
    const AttentionLineScene& scene() const { return m_scene; }
    bool pending() const { return m_lane.pending(); } // lines being made

    // Every head of `layer` as shown (TextDocument::shape), as lines. Pure: any thread.
    static std::vector<AttentionLinks> makeLinks(const TextRun& run, const TextFolder& folder,
                                                 const TextDocument::ShowOptions& show, int layer);

protected:
    void paintEvent(QPaintEvent* e) override;
    void resizeEvent(QResizeEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void leaveEvent(QEvent*) override;
    void mousePressEvent(QMouseEvent* e) override;

private:
    void refreshLinks(); // when the run, what is shown or the layer changed
    struct LinksKey {
        std::shared_ptr<const TextRun> run; // held, so that a new run never takes an old one's address
        int visible = 0, layer = 0;
        bool hideSpecial = false, wordLevel = false, valueWeighted = false;
        bool operator==(const LinksKey&) const = default;
    };

    TextDocument* m_doc;
    HeadToggleBar* m_toggles;
    int m_lastHead = -2; // the selector's head the toggles last followed
    LinksKey m_linksKey;
    LatestLane m_lane;
    AttentionLineScene m_scene;
    AttentionLineGeometry m_geometry;
};

} // namespace attnlens::ui
