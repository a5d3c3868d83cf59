#include "ui/text/chat_toggle.h"

#include "core/models/text_folder.h"

namespace attnlens::ui {

ChatToggle::ChatToggle(QWidget* parent) : QCheckBox(tr("Chat"), parent) {
    setObjectName(QStringLiteral("chat"));
}

void ChatToggle::setFolder(const TextFolder* folder) {
    // Shown where chat applies: a decoder that has a template (or one that does not parse: it says why).
    setVisible(folder && folder->decoderOnly() && (folder->chat || !folder->chatProblem.empty()));
    const bool available = folder && folder->chat.has_value();
    setEnabled(available);
    if (!available) setChecked(false);
    if (available)
        setToolTip(tr("Send the text as a user turn of the model's chat template (tokenizer_config.json), "
                      "the assistant's turn opened: what an instruct model expects"));
    else if (folder && !folder->chatProblem.empty())
        setToolTip(tr("Chat is unavailable: %1").arg(QString::fromStdString(folder->chatProblem)));
    else
        setToolTip(tr("This model has no chat template (tokenizer_config.json)"));
}

} // namespace attnlens::ui
