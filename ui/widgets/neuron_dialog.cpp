#include "ui/widgets/neuron_dialog.h"

#include "ui/render/neuron_chart.h"
#include "ui/shell/inference_worker.h"
#include "ui/widgets/number_item.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace attnlens::ui {

// The chart, drawn by the shared render function at the widget's width.
class NeuronChartWidget : public QWidget {
public:
    explicit NeuronChartWidget(QWidget* parent) : QWidget(parent) { setMinimumSize(520, 300); }
    void show(std::optional<NeuronTerms> terms, NeuronChartText text) {
        m_terms = std::move(terms);
        m_text = std::move(text);
        if (m_terms) setMinimumHeight(neuronChartHeight(*m_terms, width()));
        update();
    }
    void setMessage(const QString& message) {
        m_terms.reset();
        m_message = message;
        update();
    }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        if (!m_terms) {
            p.fillRect(rect(), palette().base());
            p.setPen(palette().color(QPalette::PlaceholderText));
            p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, m_message);
            return;
        }
        p.setFont(font());
        paintNeuronChart(p, QRectF(rect()), *m_terms, m_text);
    }

private:
    std::optional<NeuronTerms> m_terms;
    NeuronChartText m_text;
    QString m_message;
};

NeuronDialog::NeuronDialog(InferenceWorker* worker, QWidget* parent) : QDialog(parent), m_worker(worker) {
    setObjectName(QStringLiteral("neuronDialog"));
    setWindowTitle(tr("Inside one score"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    auto* controls = new QHBoxLayout;
    m_layer = new QComboBox(this);
    m_layer->setObjectName(QStringLiteral("neuronLayer"));
    m_head = new QSpinBox(this);
    m_head->setObjectName(QStringLiteral("neuronHead"));
    m_query = new QComboBox(this);
    m_query->setObjectName(QStringLiteral("neuronQuery"));
    m_query->setMaxVisibleItems(20);
    m_key = new QComboBox(this);
    m_key->setObjectName(QStringLiteral("neuronKey"));
    m_key->setMaxVisibleItems(20);
    m_argmax = new QPushButton(tr("Strongest key"), this);
    m_argmax->setObjectName(QStringLiteral("neuronArgmax"));
    m_argmax->setToolTip(tr("The key this query attends to most in this head"));
    m_sort = new QCheckBox(tr("Largest products first"), this);
    m_sort->setObjectName(QStringLiteral("neuronSort"));
    m_sort->setToolTip(tr("Order the dimensions by |q_i·k_i| instead of by index"));
    controls->addWidget(new QLabel(tr("Layer"), this));
    controls->addWidget(m_layer);
    controls->addWidget(new QLabel(tr("Head"), this));
    controls->addWidget(m_head);
    controls->addWidget(new QLabel(tr("Query"), this));
    controls->addWidget(m_query, 1);
    controls->addWidget(new QLabel(tr("Key"), this));
    controls->addWidget(m_key, 1);
    controls->addWidget(m_argmax);
    controls->addWidget(m_sort);
    layout->addLayout(controls);

    m_caption = new QLabel(this);
    m_caption->setObjectName(QStringLiteral("neuronCaption"));
    m_caption->setWordWrap(true);
    m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_caption);

    auto* split = new QSplitter(Qt::Horizontal, this);
    m_chart = new NeuronChartWidget(split);
    m_chart->setObjectName(QStringLiteral("neuronChart"));
    m_table = new QTableWidget(split);
    m_table->setObjectName(QStringLiteral("neuronTable"));
    m_table->setColumnCount(4);
    m_table->setHorizontalHeaderLabels({tr("dim"), tr("q_i"), tr("k_i"), tr("q_i·k_i")});
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setToolTip(tr("Every dimension of the head; click a column header to sort"));
    split->addWidget(m_chart);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    split->setSizes({800, 360});
    layout->addWidget(split, 1);
    resize(1180, 560);

    connect(m_layer, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updating) return;
        rebuildLayerControls();
        refresh();
    });
    for (auto* box : {m_query, m_key})
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            if (!m_updating) refresh();
        });
    connect(m_head, &QSpinBox::valueChanged, this, [this] {
        if (!m_updating) refresh();
    });
    connect(m_sort, &QCheckBox::toggled, this, &NeuronDialog::showTerms);
    connect(m_argmax, &QPushButton::clicked, this, [this] { select(layer(), head(), query(), -1); });
}

int NeuronDialog::layer() const {
    return m_layer->currentIndex();
}
int NeuronDialog::head() const {
    return m_head->value();
}
int NeuronDialog::query() const {
    return m_query->currentIndex();
}
int NeuronDialog::key() const {
    return m_key->currentIndex();
}

std::optional<float> NeuronDialog::capturedWeight() const {
    if (!m_terms || !m_source.captured) return std::nullopt;
    const float w = m_source.captured(layer(), m_terms->head, m_terms->query, m_terms->key);
    if (std::isnan(w)) return std::nullopt;
    return w;
}

QString NeuronDialog::caption() const {
    return m_caption->text();
}

void NeuronDialog::setSource(NeuronSource source, int layer, int head, int query, int key) {
    m_source = std::move(source);
    ++m_generation;
    m_inputs.clear();
    m_pending.reset();
    setWindowTitle(tr("Inside one score — %1").arg(m_source.title));
    {
        m_updating = true;
        m_layer->clear();
        for (int l = 0; l < m_source.layers; ++l)
            m_layer->addItem(m_source.layerName ? m_source.layerName(l) : tr("layer %1").arg(l));
        m_updating = false;
    }
    select(layer, head, query, key);
}

void NeuronDialog::rebuildLayerControls() {
    const int l = layer();
    if (l < 0) return;
    const bool was = m_updating;
    m_updating = true;
    const int q = m_query->currentIndex(), k = m_key->currentIndex();
    m_head->setRange(0, std::max(0, m_source.heads(l) - 1));
    m_head->setSuffix(tr(" of 0–%1").arg(m_source.heads(l) - 1));
    const QStringList queries = m_source.queryLabels(l), keys = m_source.keyLabels(l);
    auto fill = [](QComboBox* box, const QStringList& labels, int keep) {
        QStringList numbered;
        for (int i = 0; i < labels.size(); ++i)
            numbered << QStringLiteral("%1  %2").arg(i).arg(labels[i]);
        if (box->count() != numbered.size() || (box->count() > 0 && box->itemText(0) != numbered[0])) {
            box->clear();
            box->addItems(numbered);
        }
        box->setCurrentIndex(std::clamp(keep, 0, static_cast<int>(labels.size()) - 1));
    };
    fill(m_query, queries, q);
    fill(m_key, keys, k);
    m_updating = was;
}

void NeuronDialog::select(int layerIndex, int headIndex, int queryIndex, int keyIndex) {
    if (m_source.layers <= 0) return;
    m_updating = true;
    m_layer->setCurrentIndex(std::clamp(layerIndex, 0, m_source.layers - 1));
    rebuildLayerControls();
    m_head->setValue(headIndex);
    m_query->setCurrentIndex(std::clamp(queryIndex, 0, std::max(0, m_query->count() - 1)));
    if (keyIndex < 0 && m_source.captured) { // the strongest key of the captured row
        float best = -1;
        keyIndex = 0;
        for (int k = 0; k < m_key->count(); ++k) {
            const float w = m_source.captured(layer(), head(), query(), k);
            if (!std::isnan(w) && w > best) {
                best = w;
                keyIndex = k;
            }
        }
    }
    m_key->setCurrentIndex(std::clamp(keyIndex, 0, std::max(0, m_key->count() - 1)));
    m_updating = false;
    refresh();
}

void NeuronDialog::requestInputs(int l) {
    if (m_pending == l || !m_source.inputs) return;
    m_pending = l;
    m_chart->setMessage(tr("Computing what %1 receives…").arg(m_layer->itemText(l)));
    const int generation = m_generation;
    m_worker->run<std::shared_ptr<const ProjectedAttention>>(
        tr("Neuron view"),
        [compute = m_source.inputs, l](const Callbacks& cb) {
            return std::make_shared<const ProjectedAttention>(projectAttention(compute(l, cb)));
        },
        [this, generation, l](std::shared_ptr<const ProjectedAttention> inputs) {
            if (generation != m_generation) return; // the page moved on
            m_inputs[l] = std::move(inputs);
            if (m_pending == l) m_pending.reset();
            refresh();
        });
}

void NeuronDialog::refresh() {
    const int l = layer();
    m_terms.reset();
    if (l < 0 || m_source.layers <= 0) {
        m_chart->setMessage(tr("Nothing to take apart yet."));
        return;
    }
    const auto it = m_inputs.find(l);
    if (it == m_inputs.end()) {
        requestInputs(l);
        return;
    }
    try {
        m_terms = neuronTerms(*it->second, head(), query(), key());
    } catch (const std::exception& e) {
        m_chart->setMessage(QString::fromUtf8(e.what()));
        return;
    }
    showTerms();
    emit termsShown();
}

void NeuronDialog::showTerms() {
    if (!m_terms) return;
    const NeuronTerms& t = *m_terms;
    NeuronChartText text;
    text.where = tr("%1, head %2").arg(m_layer->currentText()).arg(t.head);
    text.query = m_source.queryLabels(layer()).value(t.query);
    text.key = m_source.keyLabels(layer()).value(t.key);
    if (const auto w = capturedWeight()) text.captured = *w;
    text.sortByContribution = m_sort->isChecked();
    m_chart->show(m_terms, text);

    QString html =
        tr("<b>%1</b>: the query vector of <i>%2</i> and the key vector of <i>%3</i> in this head (%4 "
           "numbers each), multiplied dimension by dimension and summed; scaled by 1/√d<sub>k</sub>; "
           "the softmax over the query's row gives the weight.")
            .arg(m_source.title.toHtmlEscaped(), text.query.toHtmlEscaped(), text.key.toHtmlEscaped())
            .arg(t.headDim);
    if (m_source.headOff && m_source.headOff(layer(), t.head))
        html += tr(
            "<br><b>This head is switched off</b> (ablation): its weights are multiplied by 0, so the model "
            "uses none of this; the score is shown as the head computes it.");
    m_caption->setText(html);

    m_table->setSortingEnabled(false);
    m_table->setRowCount(t.headDim);
    double scale = 0;
    for (float p : t.product)
        scale = std::max(scale, std::abs(double(p)));
    for (int i = 0; i < t.headDim; ++i) {
        m_table->setItem(i, 0, new NumberItem(i, 0));
        m_table->setItem(i, 1, new NumberItem(t.q[size_t(i)], 4));
        m_table->setItem(i, 2, new NumberItem(t.k[size_t(i)], 4));
        auto* p = new NumberItem(t.product[size_t(i)], 4);
        const double v = scale > 0 ? t.product[size_t(i)] / scale : 0;
        p->setBackground(v >= 0 ? QColor::fromRgbF(1.0, 1.0 - 0.6 * v, 1.0 - 0.65 * v)
                                : QColor::fromRgbF(1.0 + 0.65 * v, 1.0 + 0.45 * v, 1.0));
        p->setForeground(Qt::black);
        m_table->setItem(i, 3, p);
    }
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
}

} // namespace attnlens::ui
