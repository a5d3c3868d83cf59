// Precompiled for the Qt Test suites of label ui (cmake/Pch.cmake).
#pragma once
#include "widgets.h"

#include <QSignalSpy>
#include <QTest>
