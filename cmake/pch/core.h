// Precompiled for attnlens_core (cmake/Pch.cmake): the standard library and Eigen, which every engine file
// parses. Only headers that change nothing but compile time belong here.
#pragma once
#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>
