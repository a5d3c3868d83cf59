#pragma once
// ChatToggle: the Text page's "Chat" check box — the typed text becomes one user turn of the model's chat
// template (core/text/chat_template.h: what an instruct model was trained to see, "<|im_start|>user\n…"), the
// assistant's turn opened, and the model generates its answer. Shown for decoders with a chat template (and,
// disabled, its tooltip saying why, for one that does not parse). Object name "chat". GUI thread only.

#include <QCheckBox>

namespace attnlens {
struct TextFolder;
}

namespace attnlens::ui {

class ChatToggle : public QCheckBox {
    Q_OBJECT
public:
    explicit ChatToggle(QWidget* parent = nullptr);
    // The folder shown (nullptr: none): visibility, availability, tooltip. Unticks when it has no template.
    void setFolder(const TextFolder* folder);
    bool chatOn() const { return isChecked() && isEnabled(); } // what a run uses
};

} // namespace attnlens::ui
