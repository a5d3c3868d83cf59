// Precompiled for the widget targets (attnlens_ui, attnlens; cmake/Pch.cmake).
#pragma once
#include "gui.h"

#include <QApplication>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWidget>
