#pragma once
// Where and how tensors run: device, dtype and CPU threads, all from the experiment's `runtime:`.

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "core/config/schema.h"

namespace svqa {

// Device names every option and flag accepts: c10 keeps a device index in an int8_t, so cuda:N has N < 128.
inline const char* const kDevicePattern = "cpu|cuda|cuda:([0-9]|[1-9][0-9]|1[01][0-9]|12[0-7])|mps";
inline const char* const kDevicePatternDoc = "cpu, cuda, cuda:N (N < 128) or mps";

struct RuntimeOptions {
  std::string device = "cpu";
  std::string dtype = "float32";
  int64_t threads = 0;
  int64_t seed = 0;

  static void declare(Schema<RuntimeOptions>& s) {
    s.field("device", &RuntimeOptions::device, "torch device the model and attention run on")
        .matches(kDevicePattern, kDevicePatternDoc);
    s.field("dtype", &RuntimeOptions::dtype, "dtype of weights and activations")
        .one_of({"float32", "float16", "bfloat16"});
    s.field("threads", &RuntimeOptions::threads, "CPU threads for torch's intra-op parallelism; 0 = torch's default")
        .min(0)
        .max(1024);
    s.field("seed", &RuntimeOptions::seed, "seed for torch's random generator").min(0).max(4294967295.0);
  }
  // f(name, member) for every field declared above (engine/declared_reads.cpp copies and shows
  // them by name; tests check the two lists agree).
  template <class F>
  static void each_field(F f) {
    f("device", &RuntimeOptions::device);
    f("dtype", &RuntimeOptions::dtype);
    f("threads", &RuntimeOptions::threads);
    f("seed", &RuntimeOptions::seed);
  }
};

// The device, once this LibTorch is known to support its kind (else require_device_support's error).
c10::Device runtime_device(const RuntimeOptions& o);
// Validation stays the same on every machine (a GPU cluster's config validates on a laptop); at run
// time, before any model loads, a device this LibTorch was built without is one line naming `key`:
// "runtime.device: cuda: this LibTorch was built without CUDA (CPU only); ...". `device` must match
// kDevicePattern; "" means cpu.
c10::Device require_device_support(const std::string& device, const std::string& key);
c10::ScalarType runtime_dtype(const RuntimeOptions& o);
// Applies threads and seed to the process.
void apply_runtime(const RuntimeOptions& o);

}  // namespace svqa
