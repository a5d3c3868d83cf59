#pragma once
// A page that runs a model (Translate, Vision, ...). MainWindow's File → Open model… reads the folder's
// model_type and hands the folder to the first page that accepts it; folders that load are remembered.

#include "core/io/model_folder.h"

#include <QString>

namespace attnlens::ui {

class ModelPage {
public:
    virtual ~ModelPage() = default;
    virtual bool acceptsModel(ModelKind kind) const = 0;
    // Starts loading on the page's worker thread; errors are shown by the page, its state kept.
    virtual void openModel(const QString& dir) = 0;
    // A short description of the loaded model for the window's status bar ("opus-mt-de-en (F32)").
    virtual QString modelDescription() const = 0;
    // The folder of the model the page holds now (empty before one loaded). Pages emit a Qt signal
    // modelLoaded() when a load succeeds; MainWindow then records the folder in File → Open recent model.
    virtual QString loadedModelDir() const = 0;
    // Loads the current model again, e.g. after the linear-layer precision changed (Compute menu);
    // pages whose models do not depend on it keep theirs.
    virtual void reloadModel() {}
};

} // namespace attnlens::ui
