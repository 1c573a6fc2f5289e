#include "models/video/image_spec.h"

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <utility>

namespace svqa {
namespace {

using nlohmann::json;

// Reads one key of the "image" object; every error names the file and `image.<key>`.
class SpecReader {
 public:
  // `prefix`: where the keys sit ("image." or a nested object's "image.qwen_vl_utils.").
  SpecReader(const json& j, const std::string& where, std::string prefix = "image.")
      : j_(j), where_(where), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& expected) const {
    std::string got = j_.contains(key) ? ", got " + j_.at(key).dump() : "";
    throw std::runtime_error(where_ + ": " + prefix_ + key + ": expected " + expected + got);
  }
  bool has(const std::string& key) const { return j_.contains(key); }

  int64_t positive_int(const std::string& key, int64_t fallback, bool required) const {
    if (!has(key)) {
      if (required) throw std::runtime_error(where_ + ": " + prefix_ + key + ": missing (expected a positive integer)");
      return fallback;
    }
    const json& v = j_.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) fail(key, "a positive integer");
    return v.get<int64_t>();
  }

  double positive_number(const std::string& key, double fallback) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    if (!v.is_number() || v.get<double>() <= 0) fail(key, "a positive number");
    return v.get<double>();
  }

  std::array<double, 3> three_numbers(const std::string& key, std::array<double, 3> fallback, bool positive) const {
    if (!has(key)) return fallback;
    const json& v = j_.at(key);
    const char* expected = positive ? "a list of 3 positive numbers (one per RGB channel)"
                                    : "a list of 3 numbers (one per RGB channel)";
    if (!v.is_array() || v.size() != 3) fail(key, expected);
    std::array<double, 3> out{};
    for (size_t c = 0; c < 3; ++c) {
      if (!v[c].is_number() || (positive && v[c].get<double>() <= 0)) fail(key, expected);
      out[c] = v[c].get<double>();
    }
    return out;
  }

 private:
  const json& j_;
  std::string where_, prefix_;
};

// image.qwen_vl_utils: {"min_pixels", "max_pixels", "total_pixels"}, each optional (the reference's default).
QwenVideoPixels qwen_video_pixels_from_json(const json& j, const std::string& where) {
  const std::string expected = "an object with min_pixels, max_pixels (positive integers) and total_pixels (a positive "
                               "number), each optional";
  if (!j.is_object()) throw std::runtime_error(where + ": image.qwen_vl_utils: expected " + expected + ", got " + j.dump());
  for (const auto& [key, value] : j.items())
    if (key != "min_pixels" && key != "max_pixels" && key != "total_pixels")
      throw std::runtime_error(where + ": image.qwen_vl_utils." + key + ": unknown key (expected " + expected + ")");
  const SpecReader r(j, where, "image.qwen_vl_utils.");
  QwenVideoPixels pixels;
  pixels.min_pixels = r.positive_int("min_pixels", 0, false);
  pixels.asked_max_pixels = r.positive_int("max_pixels", 0, false);
  pixels.total_pixels = r.positive_number("total_pixels", 0);
  return pixels;
}

}  // namespace

ImageSpec image_spec_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::runtime_error(where + ": image: expected an object, got " + j.dump());
  static const std::set<std::string> kFixedOnly = {"height", "width", "interpolation"};
  static const std::set<std::string> kCropOnly = {"height", "width", "interpolation", "shortest_edge"};
  static const std::set<std::string> kQwenOnly = {"factor", "min_pixels", "max_pixels", "qwen_vl_utils"};
  static const std::set<std::string> kCommon = {"resize",     "patch_size",     "merge_size", "temporal_patch_size",
                                                "rescale_factor", "mean", "std"};
  for (const auto& [key, value] : j.items())
    if (!kCropOnly.count(key) && !kQwenOnly.count(key) && !kCommon.count(key))
      throw std::runtime_error(where + ": image." + key +
                               ": unknown key (expected resize, height, width, shortest_edge, interpolation, factor, "
                               "min_pixels, max_pixels, qwen_vl_utils, patch_size, merge_size, temporal_patch_size, rescale_factor, "
                               "mean, std)");

  const SpecReader r(j, where);
  ImageSpec spec;
  const json resize = j.value("resize", json());
  if (resize == "fixed") spec.resize = ImageSpec::Resize::Fixed;
  else if (resize == "qwen_smart") spec.resize = ImageSpec::Resize::QwenSmart;
  else if (resize == "qwen3_smart") spec.resize = ImageSpec::Resize::Qwen3Smart;
  else if (resize == "shortest_edge_crop") spec.resize = ImageSpec::Resize::ShortestEdgeCrop;
  else if (resize.is_null())
    throw std::runtime_error(where + ": image.resize: missing (expected \"fixed\", \"qwen_smart\", \"qwen3_smart\" or \"shortest_edge_crop\")");
  else r.fail("resize", "\"fixed\", \"qwen_smart\", \"qwen3_smart\" or \"shortest_edge_crop\"");
  const bool fixed = spec.resize == ImageSpec::Resize::Fixed, crop = spec.resize == ImageSpec::Resize::ShortestEdgeCrop;
  const std::set<std::string>& allowed = fixed ? kFixedOnly : crop ? kCropOnly : kQwenOnly;
  for (const auto& key : {"height", "width", "interpolation", "shortest_edge", "factor", "min_pixels", "max_pixels",
                          "qwen_vl_utils"})
    if (r.has(key) && !allowed.count(key))
      r.fail(key, std::string("no such key with resize ") + resize.dump());
  const json interpolation = j.value("interpolation", json("bicubic"));
  if (interpolation == "bilinear") spec.interpolation = ImageSpec::Interpolation::Bilinear;
  else if (interpolation != "bicubic") r.fail("interpolation", "\"bicubic\" or \"bilinear\"");

  spec.patch_size = r.positive_int("patch_size", spec.patch_size, false);
  spec.merge_size = r.positive_int("merge_size", spec.merge_size, false);
  spec.temporal_patch_size = r.positive_int("temporal_patch_size", spec.temporal_patch_size, false);
  spec.rescale_factor = r.positive_number("rescale_factor", spec.rescale_factor);
  spec.mean = r.three_numbers("mean", spec.mean, false);
  spec.std = r.three_numbers("std", spec.std, true);
  if (fixed || crop) {
    spec.height = r.positive_int("height", 0, true);
    spec.width = r.positive_int("width", 0, true);
    if (crop) spec.shortest_edge = r.positive_int("shortest_edge", 0, true);
  } else {
    // Qwen's processor resizes to multiples of patch_size * merge_size; a different factor would
    // leave frames that do not cut into whole merge groups.
    spec.factor = r.positive_int("factor", spec.patch_size * spec.merge_size, false);
    if (spec.factor != spec.patch_size * spec.merge_size)
      r.fail("factor", "patch_size * merge_size = " + std::to_string(spec.patch_size * spec.merge_size));
    spec.min_pixels = r.positive_int("min_pixels", 0, true);
    spec.max_pixels = r.positive_int("max_pixels", 0, true);
    if (spec.max_pixels < spec.min_pixels)
      r.fail("max_pixels", "at least min_pixels = " + std::to_string(spec.min_pixels));
    if (r.has("qwen_vl_utils")) spec.qwen_vl_utils = qwen_video_pixels_from_json(j.at("qwen_vl_utils"), where);
  }
  return spec;
}

}  // namespace svqa
