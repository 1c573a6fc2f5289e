// Precompiled once for every svqa target (the torch headers dominate compile time).
#pragma once
#include <ATen/ATen.h>
#include <torch/script.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
