// Precompiled for the targets on Qt Gui without widgets (attnlens_render, attnlens-cli; cmake/Pch.cmake).
#pragma once
#include "core.h"

#include <QColor>
#include <QCoreApplication>
#include <QFont>
#include <QFontMetrics>
#include <QImage>
#include <QObject>
#include <QPainter>
#include <QRect>
#include <QString>
#include <QStringList>
