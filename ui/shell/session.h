#pragma once
// Saved sessions (File → Save session / Open session, `attnlens SESSION.attnlens`): a versioned JSON file
// that holds what every page shows — its model folder, its input (text, picture, settings), the step, the
// selection, layer, head, view options, heads switched off and a pinned difference matrix — so that opening
// it tomorrow gives back exactly that view.
//
//   { "format": "attnlens-session", "version": 1, "saved_by": "0.9.0", "page": "translate",
//     "pages": { "translate": {...}, "vision": {...}, "diffusion": {...}, "attention": {...} } }
//
// A page's object names its model folder as "model_dir" (absent: the page's built-in model) and the Vision
// page its picture as "image_path" (or "image_png", the picture itself, when it came from the clipboard); the
// window checks those paths before anything changes and offers to locate what is missing.
//
// Reading is strict: every key of a known page is checked for its type and range before any page changes
// (SessionReader), so a truncated, newer or hand-edited file gives one clear message and changes nothing.

#include "core/export/colormap.h"
#include "core/io/model_folder.h"
#include "core/tensor/tensor.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace attnlens::ui {

inline constexpr int kSessionVersion = 1;
inline constexpr const char* kSessionFormat = "attnlens-session";

// A page whose view can be saved and restored. Pages are QWidgets; MainWindow finds this by dynamic_cast.
class SessionPage {
public:
    virtual ~SessionPage() = default;
    virtual QString sessionKey() const = 0; // "translate", "vision", "diffusion", "attention"
    virtual QJsonObject saveSession() const = 0;
    // Empty when `state` can be restored; else what is wrong ("pages.translate.layer: expected an integer").
    // Changes nothing.
    virtual QString checkSession(const QJsonObject& state) const = 0;
    // Restores a checked state; where a model must load or run, asynchronously (restoringSession() is true
    // until the view is as saved, or the restore stopped on an error the page shows).
    virtual void restoreSession(const QJsonObject& state) = 0;
    virtual bool restoringSession() const = 0;
};

// Typed, range-checked reading of one object; the first problem is kept (with the key's path) and later reads
// return their defaults. An absent key gives the default; a key of the wrong type or out of range is a
// problem.
class SessionReader {
public:
    SessionReader(const QJsonObject& object, QString path) : m_object(object), m_path(std::move(path)) {}

    bool has(const QString& key) const { return m_object.contains(key); }
    QString string(const QString& key, const QString& fallback = {});
    int integer(const QString& key, int fallback, int min, int max);
    double number(const QString& key, double fallback, double min, double max);
    bool boolean(const QString& key, bool fallback);
    // One of `allowed` (the default when absent).
    QString choice(const QString& key, const QString& fallback, const QStringList& allowed);
    QJsonObject object(const QString& key);
    QJsonArray array(const QString& key);
    // Integers in [min, max], `count` of them unless count < 0.
    QList<int> integers(const QString& key, int min, int max, int count = -1);
    // A matrix of finite numbers: `rows` rows of `cols` columns (any when < 0).
    QList<QList<double>> matrix(const QString& key, int rows, int cols);
    void fail(const QString& key, const QString& problem);

    bool ok() const { return m_error.isEmpty(); }
    const QString& error() const { return m_error; }
    QString where(const QString& key) const { return m_path.isEmpty() ? key : m_path + "." + key; }

private:
    QJsonObject m_object;
    QString m_path;
    QString m_error;
};

// Reads `path` and checks the envelope (format, version, page, pages). Throws attnlens::Error with one clear
// sentence: unreadable, truncated or not JSON (with where), another format, a newer version, wrong types.
QJsonObject readSessionFile(const QString& path);
// Writes atomically (a crash while writing leaves the old file). Throws attnlens::Error.
void writeSessionFile(const QString& path, const QJsonObject& session);

// A matrix as rows of numbers, and back (values from SessionReader::matrix, already checked).
QJsonArray matrixToJson(const RowMatrix& m);
RowMatrix matrixFromValues(const QList<QList<double>>& values);
// A pinned difference map {"description", "values"} (Vision, Diffusion); nullopt when `key` is absent or
// wrong (then `reader` holds the problem).
struct PinnedMap {
    RowMatrix map;
    QString description;
};
QJsonObject pinnedMapToJson(const RowMatrix& map, const QString& description);
std::optional<PinnedMap> readPinnedMap(SessionReader& reader, const QString& key);

// Heads switched off as [[layer, head], …] (non-negative integers), and back.
std::vector<std::pair<int, int>> readHeadPairs(SessionReader& reader, const QString& key);
QJsonArray headPairsToJson(const std::vector<std::pair<int, int>>& pairs);
// One of the attention colour maps by name (core/export/colormap.h), `fallback` when absent.
ColorMap readColorMap(SessionReader& reader, const QString& key, ColorMap fallback);
QString colorMapId(ColorMap map);

// A page's model folder for its session object: {"model_dir": absolute path}, or nothing when `dir` is the
// built-in model of the kind `builtin` (sessions stay portable between installs).
void saveModelDir(QJsonObject& state, const QString& dir, ModelKind builtin);
// The folder to load: "model_dir", else the built-in model's folder (empty when that is not installed).
QString sessionModelDir(const QJsonObject& state, ModelKind builtin);

} // namespace attnlens::ui
