// Precompiled for the Qt Test suites of labels fast and model (cmake/Pch.cmake).
#pragma once
#include "gui.h"

#include <QSignalSpy>
#include <QTest>
