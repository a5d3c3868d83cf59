// attnlens: the GUI front end. Composes the main window from the pages in ui/.

#include "ui/shell/main_window.h"

#include <QApplication>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Attention Lens");
    QApplication::setOrganizationName("AttentionLens");
    QApplication::setApplicationVersion("0.1.0");
    attnlens::ui::MainWindow window;
    window.show();
    return QApplication::exec();
}
