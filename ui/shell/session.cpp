#include "ui/shell/session.h"

#include "core/io/model_folder.h"
#include "core/util/error.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QSaveFile>

#include <cmath>

namespace attnlens::ui {

namespace {

QString typeName(const QJsonValue& v) {
    switch (v.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return QStringLiteral("a boolean");
    case QJsonValue::Double:
        return QStringLiteral("a number");
    case QJsonValue::String:
        return QStringLiteral("a string");
    case QJsonValue::Array:
        return QStringLiteral("an array");
    case QJsonValue::Object:
        return QStringLiteral("an object");
    default:
        return QStringLiteral("nothing");
    }
}

bool isInteger(const QJsonValue& v) {
    return v.isDouble() && std::isfinite(v.toDouble()) && std::floor(v.toDouble()) == v.toDouble() &&
           std::abs(v.toDouble()) < 1e15;
}

} // namespace

void SessionReader::fail(const QString& key, const QString& problem) {
    if (m_error.isEmpty()) m_error = where(key) + ": " + problem;
}

QString SessionReader::string(const QString& key, const QString& fallback) {
    if (!ok() || !has(key)) return fallback;
    const QJsonValue v = m_object.value(key);
    if (!v.isString()) {
        fail(key, "expected a string, found " + typeName(v));
        return fallback;
    }
    return v.toString();
}

int SessionReader::integer(const QString& key, int fallback, int min, int max) {
    if (!ok() || !has(key)) return fallback;
    const QJsonValue v = m_object.value(key);
    if (!isInteger(v) || v.toDouble() < min || v.toDouble() > max) {
        fail(key, QString("expected an integer from %1 to %2, found %3")
                      .arg(min)
                      .arg(max)
                      .arg(v.isDouble() ? QString::number(v.toDouble()) : typeName(v)));
        return fallback;
    }
    return static_cast<int>(v.toDouble());
}

double SessionReader::number(const QString& key, double fallback, double min, double max) {
    if (!ok() || !has(key)) return fallback;
    const QJsonValue v = m_object.value(key);
    if (!v.isDouble() || !std::isfinite(v.toDouble()) || v.toDouble() < min || v.toDouble() > max) {
        fail(key, QString("expected a number from %1 to %2, found %3")
                      .arg(min)
                      .arg(max)
                      .arg(v.isDouble() ? QString::number(v.toDouble()) : typeName(v)));
        return fallback;
    }
    return v.toDouble();
}

bool SessionReader::boolean(const QString& key, bool fallback) {
    if (!ok() || !has(key)) return fallback;
    const QJsonValue v = m_object.value(key);
    if (!v.isBool()) {
        fail(key, "expected true or false, found " + typeName(v));
        return fallback;
    }
    return v.toBool();
}

QString SessionReader::choice(const QString& key, const QString& fallback, const QStringList& allowed) {
    const QString s = string(key, fallback);
    if (ok() && !allowed.contains(s)) {
        fail(key, "expected one of " + allowed.join(", ") + ", found \"" + s + "\"");
        return fallback;
    }
    return s;
}

QJsonObject SessionReader::object(const QString& key) {
    if (!ok() || !has(key)) return {};
    const QJsonValue v = m_object.value(key);
    if (!v.isObject()) {
        fail(key, "expected an object, found " + typeName(v));
        return {};
    }
    return v.toObject();
}

QJsonArray SessionReader::array(const QString& key) {
    if (!ok() || !has(key)) return {};
    const QJsonValue v = m_object.value(key);
    if (!v.isArray()) {
        fail(key, "expected an array, found " + typeName(v));
        return {};
    }
    return v.toArray();
}

QList<int> SessionReader::integers(const QString& key, int min, int max, int count) {
    const QJsonArray a = array(key);
    QList<int> out;
    if (!ok()) return out;
    if (count >= 0 && a.size() != count) {
        fail(key, QString("expected %1 integers, found %2").arg(count).arg(a.size()));
        return {};
    }
    for (const QJsonValue& v : a) {
        if (!isInteger(v) || v.toDouble() < min || v.toDouble() > max) {
            fail(key, QString("expected integers from %1 to %2, found %3")
                          .arg(min)
                          .arg(max)
                          .arg(v.isDouble() ? QString::number(v.toDouble()) : typeName(v)));
            return {};
        }
        out.push_back(static_cast<int>(v.toDouble()));
    }
    return out;
}

QList<QList<double>> SessionReader::matrix(const QString& key, int rows, int cols) {
    const QJsonArray a = array(key);
    QList<QList<double>> out;
    if (!ok()) return out;
    if (rows >= 0 && a.size() != rows) {
        fail(key, QString("expected %1 rows, found %2").arg(rows).arg(a.size()));
        return {};
    }
    for (const QJsonValue& row : a) {
        if (!row.isArray() || (cols >= 0 && row.toArray().size() != cols) ||
            (!out.isEmpty() && row.toArray().size() != out.front().size())) {
            fail(key, cols >= 0 ? QString("expected rows of %1 numbers").arg(cols)
                                : QString("expected rows of equal length"));
            return {};
        }
        QList<double> values;
        for (const QJsonValue& v : row.toArray()) {
            if (!v.isDouble() || !std::isfinite(v.toDouble())) {
                fail(key, "expected finite numbers, found " + typeName(v));
                return {};
            }
            values.push_back(v.toDouble());
        }
        out.push_back(values);
    }
    return out;
}

QJsonObject readSessionFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw Error("'" + path.toStdString() + "': cannot read the session (" +
                    file.errorString().toStdString() + ")");
    constexpr qint64 kMaxBytes = qint64{256} << 20;
    if (file.size() > kMaxBytes) throw Error("'" + path.toStdString() + "': too large for a session file");
    const QByteArray bytes = file.readAll();
    QJsonParseError parse{};
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &parse);
    const std::string where = "'" + path.toStdString() + "'";
    if (parse.error != QJsonParseError::NoError)
        throw Error(where + ": not a readable session (" + parse.errorString().toStdString() + " at byte " +
                    std::to_string(parse.offset) +
                    (bytes.isEmpty() ? ", the file is empty" : "; truncated?") + ")");
    if (!doc.isObject()) throw Error(where + ": not an Attention Lens session (the JSON is not an object)");
    const QJsonObject session = doc.object();
    if (session.value("format").toString() != QLatin1String(kSessionFormat))
        throw Error(where + ": not an Attention Lens session (its \"format\" is not \"" + kSessionFormat +
                    "\")");
    const QJsonValue version = session.value("version");
    if (!version.isDouble() || version.toDouble() != std::floor(version.toDouble()) || version.toDouble() < 1)
        throw Error(where + ": the session has no valid \"version\"");
    if (version.toDouble() > kSessionVersion)
        throw Error(where + ": written by a newer Attention Lens (session version " +
                    QString::number(version.toDouble(), 'f', 0).toStdString() + // any size (fuzz_session)
                    "); this one reads version " + std::to_string(kSessionVersion) +
                    " — update Attention Lens to open it");
    if (!session.value("pages").isObject()) throw Error(where + ": \"pages\" must be an object");
    if (session.contains("page") && !session.value("page").isString())
        throw Error(where + ": \"page\" must be a string");
    const QJsonObject pages = session.value("pages").toObject();
    for (auto it = pages.begin(); it != pages.end(); ++it)
        if (!it.value().isObject())
            throw Error(where + ": pages." + it.key().toStdString() + " must be an object");
    return session;
}

void writeSessionFile(const QString& path, const QJsonObject& session) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        throw Error("'" + path.toStdString() + "': cannot write (" + file.errorString().toStdString() + ")");
    file.write(QJsonDocument(session).toJson(QJsonDocument::Indented));
    if (!file.commit())
        throw Error("'" + path.toStdString() + "': cannot write (" + file.errorString().toStdString() + ")");
}

QJsonArray matrixToJson(const RowMatrix& m) {
    QJsonArray rows;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        QJsonArray row;
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            row.append(double(m(i, j)));
        rows.append(row);
    }
    return rows;
}

RowMatrix matrixFromValues(const QList<QList<double>>& values) {
    RowMatrix m(values.size(), values.isEmpty() ? 0 : values.front().size());
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            m(i, j) = static_cast<float>(values[i][j]);
    return m;
}

QJsonObject pinnedMapToJson(const RowMatrix& map, const QString& description) {
    return QJsonObject{{"description", description}, {"values", matrixToJson(map)}};
}

std::optional<PinnedMap> readPinnedMap(SessionReader& reader, const QString& key) {
    if (!reader.has(key)) return std::nullopt;
    SessionReader pin(reader.object(key), reader.where(key));
    PinnedMap out;
    out.description = pin.string("description");
    const auto values = pin.matrix("values", -1, -1);
    if (pin.ok() && (values.isEmpty() || values.front().isEmpty()))
        pin.fail("values", "expected a matrix, found none");
    if (!pin.ok()) {
        reader.fail(key, pin.error().section(": ", 1));
        return std::nullopt;
    }
    out.map = matrixFromValues(values);
    return out;
}

std::vector<std::pair<int, int>> readHeadPairs(SessionReader& reader, const QString& key) {
    std::vector<std::pair<int, int>> out;
    for (const QJsonValue& p : reader.array(key)) {
        const QJsonArray lh = p.toArray();
        if (!p.isArray() || lh.size() != 2 || !isInteger(lh[0]) || !isInteger(lh[1]) ||
            lh[0].toDouble() < 0 || lh[1].toDouble() < 0 || lh[0].toDouble() > 4096 ||
            lh[1].toDouble() > 4096) {
            reader.fail(key, "expected [layer, head] pairs of non-negative integers");
            return {};
        }
        out.emplace_back(lh[0].toInt(), lh[1].toInt());
    }
    return out;
}

QJsonArray headPairsToJson(const std::vector<std::pair<int, int>>& pairs) {
    QJsonArray a;
    for (const auto& [l, h] : pairs)
        a.append(QJsonArray{l, h});
    return a;
}

QString colorMapId(ColorMap map) {
    return QString::fromLatin1(colorMapName(map).data());
}

ColorMap readColorMap(SessionReader& reader, const QString& key, ColorMap fallback) {
    QStringList names;
    for (ColorMap m : allColorMaps())
        names << colorMapId(m);
    const QString name = reader.choice(key, colorMapId(fallback), names);
    return parseColorMap(name.toStdString()).value_or(fallback);
}

void saveModelDir(QJsonObject& state, const QString& dir, ModelKind builtin) {
    if (dir.isEmpty()) return;
    try {
        if (QFileInfo(dir) == QFileInfo(QString::fromStdString(builtinModelDir(builtin).string()))) return;
    } catch (const Error&) { // no built-in model here: keep the folder
    }
    state.insert("model_dir", QFileInfo(dir).absoluteFilePath());
}

QString sessionModelDir(const QJsonObject& state, ModelKind builtin) {
    if (state.contains("model_dir")) return state.value("model_dir").toString();
    try {
        return QString::fromStdString(builtinModelDir(builtin).string());
    } catch (const Error&) {
        return {};
    }
}

} // namespace attnlens::ui
