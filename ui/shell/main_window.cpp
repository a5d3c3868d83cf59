#include "ui/shell/main_window.h"

#include "core/io/gguf.h"
#include "core/registry/model_registry.h"
#include "core/util/parallel.h"
#include "ui/shell/help_dialogs.h"
#include "ui/shell/hf_cache_dialog.h"
#include "ui/shell/model_page.h"
#include "ui/shell/session_autosave.h"
#include "ui/shell/theme.h"
#include "ui/shell/workspace_page.h"
#include "ui/widgets/page_message.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

namespace attnlens::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(tr("Attention Lens"));
    setAcceptDrops(true); // a model folder dropped anywhere opens on its page
    auto* central = new QWidget(this);
    auto* layout = new QHBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    m_sidebar = new QListWidget(central);
    m_sidebar->setObjectName("pageSwitcher");
    m_sidebar->setFixedWidth(150);
    m_sidebar->setFrameShape(QFrame::NoFrame);
    m_sidebar->setStyleSheet("QListWidget#pageSwitcher { background: palette(window); font-size: 11pt; }"
                             "QListWidget#pageSwitcher::item { padding: 10px 8px; }"
                             "QListWidget#pageSwitcher::item:selected { background: palette(highlight);"
                             " color: palette(highlighted-text); }");
    m_pages = new QStackedWidget;
    // Below a page's minimum size (a small laptop screen) the page scrolls instead of its widgets being drawn
    // over each other. Only the page shown counts: the others' size policies are Ignored, which takes them
    // out of the stack's minimum size.
    auto* scroll = new QScrollArea(central);
    scroll->setObjectName(QStringLiteral("pageScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setWidget(m_pages);
    connect(m_pages, &QStackedWidget::currentChanged, this, &MainWindow::sizeByCurrentPage);
    // Window-level failures (a folder that is no model, a type no page opens) show in this banner; a page's
    // own failures (a corrupt checkpoint, bad input) in the page's banner. No dialogs for errors.
    auto* right = new QVBoxLayout;
    right->setContentsMargins(0, 0, 0, 0);
    right->setSpacing(0);
    m_message = new PageMessage(central); // floats at the window's bottom edge: it moves nothing
    m_message->setObjectName(QStringLiteral("windowMessage"));
    right->addWidget(scroll, 1);
    layout->addWidget(m_sidebar);
    layout->addLayout(right, 1);
    setCentralWidget(central);
    connect(m_sidebar, &QListWidget::currentRowChanged, m_pages, &QStackedWidget::setCurrentIndex);
    // The window's banner belongs to the page it appeared on: it does not follow the user to another page.
    connect(m_sidebar, &QListWidget::currentRowChanged, m_message, &PageMessage::dismiss);

    m_fileMenu = menuBar()->addMenu(tr("&File"));
    m_viewMenu = menuBar()->addMenu(tr("&View"));
    m_computeMenu = menuBar()->addMenu(tr("&Compute"));
    m_helpMenu = menuBar()->addMenu(tr("&Help"));
    buildComputeMenu();
    auto* open = m_fileMenu->addAction(tr("&Open model…"), this, &MainWindow::chooseModel);
    open->setShortcut(QKeySequence::Open);
    m_fileMenu->addAction(tr("Open &GGUF file…"), this, &MainWindow::chooseModelFile);
    m_fileMenu->addAction(tr("Open from &Hugging Face cache…"), this, [this] {
        HfCacheDialog dialog(this);
        if (dialog.exec() == QDialog::Accepted && !dialog.chosenFolder().isEmpty())
            openModel(dialog.chosenFolder());
    });
    m_recentMenu = m_fileMenu->addMenu(tr("Open &recent model"));
    rebuildRecentMenu();
    m_sessions = new SessionFiles(this, m_pages, m_message, [this](int i) { setCurrentPage(i); });
    m_autosave = new SessionAutosave(m_sessions, m_message, this);
    m_sessions->addMenus(m_fileMenu);
    m_fileMenu->addSeparator();
    auto* quit = m_fileMenu->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);
    buildThemeMenu();
    m_viewMenu->addSeparator();
    auto* explain = m_helpMenu->addAction(tr("&What am I looking at?"), this, [this] {
        showExplanationDialog(this, [this] { return m_pages->currentWidget(); });
    });
    explain->setObjectName(QStringLiteral("whatAmILookingAt"));
    explain->setShortcut(QKeySequence::HelpContents);
    auto* keys = m_helpMenu->addAction(tr("&Keyboard shortcuts"), this,
                                       [this] { showShortcutsDialog(this, pageList()); });
    keys->setObjectName(QStringLiteral("keyboardShortcuts"));
    keys->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Slash));
    m_helpMenu->addSeparator();
    m_helpMenu->addAction(tr("&About Attention Lens"), this, [this] {
        QMessageBox::about(
            this, tr("About Attention Lens"),
            tr("<h3>Attention Lens %1</h3><p>See attention inside transformer models, live, on "
               "your own input.</p>")
                .arg(QApplication::applicationVersion()));
    });
    m_helpMenu->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
    statusBar()->showMessage(tr("Ready"));
    resize(1280, 820);
}

// View → Theme: System / Light / Dark, remembered ("theme" setting).
void MainWindow::buildThemeMenu() {
    QMenu* menu = m_viewMenu->addMenu(tr("&Theme"));
    auto* group = new QActionGroup(this);
    struct Entry {
        Theme theme;
        QString title;
        const char* name;
    };
    const Entry themes[] = {{Theme::System, tr("&System (the desktop's look)"), "themeSystem"},
                            {Theme::Light, tr("&Light"), "themeLight"},
                            {Theme::Dark, tr("&Dark"), "themeDark"}};
    for (const auto& [theme, title, name] : themes) {
        QAction* a = menu->addAction(title);
        a->setObjectName(QString::fromLatin1(name));
        a->setCheckable(true);
        a->setChecked(currentTheme() == theme);
        group->addAction(a);
        connect(a, &QAction::triggered, this, [chosen = theme] { // (clang 14: no capture of a binding)
            applyTheme(chosen);
            saveTheme(chosen);
        });
    }
}

QList<QPair<QString, QWidget*>> MainWindow::pageList() const {
    QList<QPair<QString, QWidget*>> pages;
    for (int i = 0; i < m_pages->count(); ++i)
        pages.push_back({m_sidebar->item(i)->text(), m_pages->widget(i)});
    return pages;
}

// Compute → FP32 / BF16: the number format linear layers are packed in (attnlens::setLinearPrecision).
// Applied before the pages load their models; changing it reloads the models that use it.
void MainWindow::buildComputeMenu() {
    auto* group = new QActionGroup(this);
    auto* fp32 = m_computeMenu->addAction(tr("&FP32 — exact (matches PyTorch to 1e-4)"));
    auto* bf16 = m_computeMenu->addAction(tr("&BF16 — fast mode, approximate"));
    fp32->setObjectName(QStringLiteral("precisionFp32"));
    bf16->setObjectName(QStringLiteral("precisionBf16"));
    for (QAction* a : {fp32, bf16}) {
        a->setCheckable(true);
        group->addAction(a);
    }
    bf16->setEnabled(bf16Available());
    bf16->setToolTip(bf16Available()
                         ? tr("Weights and layer inputs in bfloat16, float32 accumulation; the difference "
                              "from FP32 is measured when a model loads and shown on its page.")
                         : tr("Needs the oneDNN kernel and a CPU with AVX-512."));
    m_computeMenu->setToolTipsVisible(true);
    const bool wantBf16 =
        QSettings().value("precision").toString() == QLatin1String("bf16") && bf16Available();
    setLinearPrecision(wantBf16 ? LinearPrecision::Bf16 : LinearPrecision::Fp32);
    (wantBf16 ? bf16 : fp32)->setChecked(true);
    m_fp32 = fp32;
    m_bf16 = bf16;
    connect(group, &QActionGroup::triggered, this, [this, bf16](QAction* chosen) {
        const LinearPrecision p = chosen == bf16 ? LinearPrecision::Bf16 : LinearPrecision::Fp32;
        if (p == linearPrecision()) return;
        QSettings().setValue("precision", QString::fromLatin1(linearPrecisionName(p)));
        applyPrecision(p);
    });
    m_computeMenu->addSeparator();
    buildThreadsMenu();
}

// Compute → Threads: the team every model computes on (attnlens::setComputeThreads), remembered as QSettings
// "threads" (0: automatic, this machine's physical cores). Read by each parallel kernel as it starts, so a
// change applies from the next run on without reloading anything.
void MainWindow::buildThreadsMenu() {
    QMenu* menu = m_computeMenu->addMenu(tr("&Threads"));
    menu->setObjectName(QStringLiteral("threadsMenu"));
    auto* group = new QActionGroup(this);
    const int automatic = defaultComputeThreads(), most = std::max(automatic, std::min(physicalCores(), 16));
    const auto threadsText = [](int n) { return n == 1 ? tr("1 thread") : tr("%1 threads").arg(n); };
    auto* autoAction = menu->addAction(tr("&Automatic (%1)").arg(threadsText(automatic)));
    autoAction->setData(0);
    autoAction->setObjectName(QStringLiteral("threadsAuto"));
    menu->addSeparator();
    QList<QAction*> actions{autoAction};
    for (int n = 1; n <= most; n = n < 4 ? n + 1 : n * 2) {
        QAction* a = menu->addAction(threadsText(n));
        a->setData(n);
        a->setObjectName(QStringLiteral("threads%1").arg(n));
        actions.push_back(a);
    }
    const int saved = QSettings().value("threads", 0).toInt();
    for (QAction* a : actions) {
        a->setCheckable(true);
        group->addAction(a);
        if (a->data().toInt() == saved) a->setChecked(true);
    }
    if (!group->checkedAction()) autoAction->setChecked(true);
    const auto apply = [automatic](int n) { setComputeThreads(n > 0 ? n : automatic); };
    apply(group->checkedAction()->data().toInt());
    menu->setEnabled(parallelBuild());
    connect(group, &QActionGroup::triggered, this, [this, apply](QAction* chosen) {
        const int n = chosen->data().toInt();
        QSettings().setValue("threads", n);
        apply(n);
        statusBar()->showMessage(
            tr("Computing on %n thread(s) from the next run", nullptr, computeThreads()));
    });
}

bool MainWindow::setPrecision(LinearPrecision p) {
    if (p == LinearPrecision::Bf16 && !bf16Available()) return false;
    (p == LinearPrecision::Bf16 ? m_bf16 : m_fp32)->setChecked(true);
    if (p != linearPrecision()) applyPrecision(p);
    return true;
}

void MainWindow::applyPrecision(LinearPrecision p) {
    setLinearPrecision(p);
    if (m_pages->count() == 0) return; // before the pages exist: they load in this precision
    statusBar()->showMessage(tr("Linear layers now in %1; reloading the models…")
                                 .arg(QString::fromLatin1(linearPrecisionName(p)).toUpper()));
    for (int i = 0; i < m_pages->count(); ++i)
        if (auto* page = dynamic_cast<ModelPage*>(m_pages->widget(i))) page->reloadModel();
}

int MainWindow::addPage(const QString& title, QWidget* page) {
    const int index = m_pages->addWidget(page);
    sizeByCurrentPage();
    m_sidebar->addItem(title);
    auto* action = m_viewMenu->addAction(title, this, [this, index] { setCurrentPage(index); });
    // Recent models hold folders that loaded: the folder handed to a page is remembered when the page
    // reports it loaded (a failed load leaves the list as it was).
    if (auto* workspace = qobject_cast<WorkspacePage*>(page)) {
        connect(workspace, &WorkspacePage::modelLoaded, this,
                [this, workspace] { pageLoadedModel(workspace); });
        connect(workspace, &WorkspacePage::inputFileShown, m_sessions, &SessionFiles::rememberImage);
    }
    if (index < 9) action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + index)));
    if (m_sidebar->currentRow() < 0) m_sidebar->setCurrentRow(0);
    return index;
}

void MainWindow::chooseModel() {
    const QString start = recentModels().value(0);
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Open a Hugging Face model folder"), start);
    if (!dir.isEmpty()) openModel(dir);
}

void MainWindow::chooseModelFile() {
    const QString file = QFileDialog::getOpenFileName(
        this, tr("Open a GGUF model file (llama.cpp, LM Studio, an Ollama blob)"), recentModels().value(0),
        tr("GGUF models (*.gguf);;All files — Ollama's blobs have no suffix (*)"));
    if (!file.isEmpty()) openModel(file);
}

namespace {
bool isSession(const QFileInfo& info) {
    return info.isFile() && info.suffix() == QLatin1String("attnlens");
}
// The one local folder, GGUF file or session file (.attnlens) in a drag, or empty.
QString droppedFolder(const QMimeData* mime) {
    if (!mime || !mime->hasUrls() || mime->urls().size() != 1 || !mime->urls().front().isLocalFile())
        return {};
    const QString path = mime->urls().front().toLocalFile();
    const QFileInfo info(path);
    return info.isDir() || isSession(info) || (info.isFile() && GgufFile::isGguf(path.toStdString()))
               ? path
               : QString();
}
} // namespace

bool MainWindow::dropModelFolder(const QMimeData* mime) {
    const QString path = droppedFolder(mime);
    if (path.isEmpty()) return false;
    if (isSession(QFileInfo(path)))
        openSession(path);
    else
        openModel(path);
    return true;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!droppedFolder(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    if (dropModelFolder(event->mimeData())) event->acceptProposedAction();
}

// The pages' named splitters in this window (not those of dialogs, which are windows of their own).
static QList<QSplitter*> namedSplitters(QMainWindow* window) {
    QList<QSplitter*> out;
    for (QSplitter* s : window->findChildren<QSplitter*>())
        if (!s->objectName().isEmpty() && s->window() == window) out << s;
    return out;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings;
    settings.setValue("windowGeometry", saveGeometry());
    settings.setValue("windowState", saveState());
    for (QSplitter* s : namedSplitters(this))
        settings.setValue("splitters/" + s->objectName(), s->saveState());
    m_autosave->finish(); // the last state kept as last-session.attnlens
    QMainWindow::closeEvent(event);
}

void MainWindow::restoreWindowGeometry() {
    QSettings settings;
    restoreGeometry(settings.value("windowGeometry").toByteArray());
    restoreState(settings.value("windowState").toByteArray());
    for (QSplitter* s : namedSplitters(this))
        if (const QVariant state = settings.value("splitters/" + s->objectName()); state.isValid())
            s->restoreState(state.toByteArray());
}

bool MainWindow::openModel(const QString& dir) {
    ModelKind kind = ModelKind::Unknown;
    try {
        kind = detectModelKind(dir.toStdString());
    } catch (const std::exception& e) {
        m_message->showError(tr("Cannot open the model: %1").arg(QString::fromStdString(e.what())));
        return false;
    }
    for (int i = 0; i < m_pages->count(); ++i) {
        auto* page = dynamic_cast<ModelPage*>(m_pages->widget(i));
        if (page && page->acceptsModel(kind)) {
            m_message->dismiss();
            setCurrentPage(i);
            m_pendingModel[m_pages->widget(i)] = dir;
            page->openModel(dir);
            return true;
        }
    }
    m_message->showError(tr("Cannot open the model: '%1' is a '%2' model; this version opens %3 models.")
                             .arg(dir,
                                  QString::fromStdString(inspectModelFolder(dir.toStdString()).modelType),
                                  QString::fromStdString(supportedFamilies())));
    return false;
}

void MainWindow::pageLoadedModel(WorkspacePage* page) {
    const auto pending = m_pendingModel.find(page);
    if (pending == m_pendingModel.end()) return;
    const QString dir = pending.value();
    if (QFileInfo(page->loadedModelDir()) != QFileInfo(dir)) return; // a reload or another folder loaded
    m_pendingModel.erase(pending);
    rememberModel(dir);
}

QString MainWindow::windowMessage() const {
    return m_message->message();
}

QStringList MainWindow::recentModels() const {
    return QSettings().value("recentModels").toStringList();
}

void MainWindow::rememberModel(const QString& dir) {
    QStringList recent = recentModels();
    recent.removeAll(dir);
    recent.prepend(dir);
    while (recent.size() > 8)
        recent.removeLast();
    QSettings().setValue("recentModels", recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList recent = recentModels();
    for (const QString& dir : recent)
        m_recentMenu->addAction(dir, this, [this, dir] { openModel(dir); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::sizeByCurrentPage() {
    for (int i = 0; i < m_pages->count(); ++i) {
        const auto policy = i == m_pages->currentIndex() ? QSizePolicy::Preferred : QSizePolicy::Ignored;
        m_pages->widget(i)->setSizePolicy(policy, policy);
    }
    m_pages->updateGeometry();
}

void MainWindow::setCurrentPage(int index) {
    m_sidebar->setCurrentRow(index);
}
int MainWindow::currentPage() const {
    return m_pages->currentIndex();
}
QWidget* MainWindow::page(int index) const {
    return m_pages->widget(index);
}
int MainWindow::pageCount() const {
    return m_pages->count();
}

} // namespace attnlens::ui
