#include "models/loading/manifest.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/safe_paths.h"
#include "core/io/json_text.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ManifestReader {
 public:
  explicit ManifestReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::runtime_error(file_ + ": " + key + ": " + what);
  }
  const json& at(const json& j, const std::string& key, const std::string& path) const {
    if (!j.is_object() || !j.contains(key)) fail(path + key, "missing");
    return j.at(key);
  }
  template <typename T>
  T get(const json& j, const std::string& key, const std::string& path) const {
    const json& v = at(j, key, path);
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      fail(path + key, "expected " + expected<T>() + ", got " + v.dump());
    }
  }
  template <typename T>
  T get_or(const json& j, const std::string& key, const std::string& path, T fallback) const {
    return j.contains(key) ? get<T>(j, key, path) : fallback;
  }

 private:
  template <typename T>
  static std::string expected() {
    if constexpr (std::is_same_v<T, std::string>) return "a string";
    else if constexpr (std::is_same_v<T, bool>) return "true or false";
    else if constexpr (std::is_integral_v<T>) return "an integer";
    else if constexpr (std::is_floating_point_v<T>) return "a number";
    else return "a list";
  }
  std::string file_;
};

}  // namespace

std::string Manifest::path(const std::string& rel, const std::string& key) const {
  if (!stays_inside(rel))
    throw std::runtime_error(dir + "/manifest.json: " + key + ": \"" + rel + "\" is not a path inside the export folder");
  const fs::path p = fs::path(dir) / rel;
  if (!fs::exists(p))
    throw std::runtime_error(p.string() + ": missing (listed in " + dir + "/manifest.json as " + key +
                             "; re-run the export)");
  return p.string();
}

Manifest load_manifest(const std::string& dir) {
  const std::string file = (fs::path(dir) / "manifest.json").string();
  if (!fs::is_directory(dir)) throw std::runtime_error(dir + ": export directory not found");
  if (!fs::exists(file))
    throw std::runtime_error(file + ": not found (expected an svqa export; make one with `python -m models.export`)");
  const json j = read_json_file(file);
  ManifestReader r(file);
  if (r.get<std::string>(j, "format", "") != "svqa-export") r.fail("format", "expected \"svqa-export\"");
  const int version = r.get<int>(j, "format_version", "");
  if (version != kExportFormatVersion)
    r.fail("format_version", "this svqa reads version " + std::to_string(kExportFormatVersion) + ", the export is version " +
                                 std::to_string(version) + " (re-export with this checkout's models/export)");
  Manifest m;
  m.dir = fs::absolute(dir).lexically_normal().string();
  m.architecture_name = r.get<std::string>(j, "architecture", "");
  if (m.architecture_name == "llava_onevision") m.architecture = Architecture::LlavaOnevision;
  else if (m.architecture_name == "qwen2_5_vl") m.architecture = Architecture::Qwen2_5_VL;
  else if (m.architecture_name == "qwen3_vl") m.architecture = Architecture::Qwen3_VL;
  else r.fail("architecture", "unknown '" + m.architecture_name + "' (expected llava_onevision, qwen2_5_vl or qwen3_vl)");
  m.source = r.get_or<std::string>(j, "source", "", "");
  m.dtype = r.get<std::string>(j, "dtype", "");
  if (m.dtype != "float32" && m.dtype != "float16" && m.dtype != "bfloat16")
    r.fail("dtype", "expected float32, float16 or bfloat16, got '" + m.dtype + "'");

  const json& t = r.at(j, "text", "");
  m.text.hidden_size = r.get<int64_t>(t, "hidden_size", "text.");
  m.text.num_layers = r.get<int64_t>(t, "num_layers", "text.");
  m.text.num_heads = r.get<int64_t>(t, "num_heads", "text.");
  m.text.num_kv_heads = r.get<int64_t>(t, "num_kv_heads", "text.");
  m.text.head_dim = r.get<int64_t>(t, "head_dim", "text.");
  m.text.vocab_size = r.get<int64_t>(t, "vocab_size", "text.");
  m.text.rope_theta = r.get<double>(t, "rope_theta", "text.");
  m.text.rms_norm_eps = r.get<double>(t, "rms_norm_eps", "text.");
  m.text.mrope_section = r.get_or<std::vector<int64_t>>(t, "mrope_section", "text.", {});
  m.text.mrope_interleaved = r.get_or<bool>(t, "mrope_interleaved", "text.", false);
  if (m.text.num_heads <= 0 || m.text.num_kv_heads <= 0 || m.text.num_heads % m.text.num_kv_heads)
    r.fail("text.num_kv_heads", "must divide num_heads");

  const json& v = r.at(j, "vision", "");
  if (m.architecture == Architecture::LlavaOnevision) {
    m.vision.tokens_per_frame = r.get<int64_t>(v, "tokens_per_frame", "vision.");
    m.vision.video_newline = r.get<bool>(v, "video_newline", "vision.");
    m.vision.layers = r.get_or<int64_t>(v, "layers", "vision.", 0);
    m.vision.num_heads = r.get_or<int64_t>(v, "num_heads", "vision.", 0);
    if (m.vision.layers < 0 || (m.vision.layers > 0 && m.vision.num_heads <= 0))
      r.fail("vision.layers", "must be 0 (no layer-by-layer tower) or positive, with vision.num_heads positive");
  } else {
    const bool qwen3 = m.architecture == Architecture::Qwen3_VL;
    m.vision.patch_size = r.get<int64_t>(v, "patch_size", "vision.");
    m.vision.spatial_merge_size = r.get<int64_t>(v, "spatial_merge_size", "vision.");
    m.vision.temporal_patch_size = r.get<int64_t>(v, "temporal_patch_size", "vision.");
    m.vision.num_heads = r.get<int64_t>(v, "num_heads", "vision.");
    m.vision.head_dim = r.get<int64_t>(v, "head_dim", "vision.");
    m.vision.rope_theta = r.get<double>(v, "rope_theta", "vision.");
    if (qwen3) {
      m.vision.num_position_embeddings = r.get<int64_t>(v, "num_position_embeddings", "vision.");
      m.vision.deepstack_layers = r.get<int64_t>(v, "deepstack_layers", "vision.");
      if (m.vision.deepstack_layers < 0 || m.vision.deepstack_layers > m.text.num_layers)
        r.fail("vision.deepstack_layers", "must be in [0, text.num_layers]");
      if (!m.text.mrope_interleaved) r.fail("text.mrope_interleaved", "must be true (Qwen3-VL interleaves mRoPE)");
    } else {
      m.vision.window_size = r.get<int64_t>(v, "window_size", "vision.");
      m.vision.tokens_per_second = r.get<double>(v, "tokens_per_second", "vision.");
    }
    if (m.text.mrope_section.empty()) r.fail("text.mrope_section", "missing (" + m.architecture_name + " uses mRoPE)");
  }
  m.image = image_spec_from_json(r.at(j, "image", ""), file);
  m.eos_ids = r.get<std::vector<int64_t>>(r.at(j, "tokens", ""), "eos", "tokens.");
  m.video_prompt = r.get<std::string>(r.at(j, "chat", ""), "video_prompt", "chat.");
  const size_t video = m.video_prompt.find("{video}"), question = m.video_prompt.find("{question}");
  if (video == std::string::npos || question == std::string::npos || question < video)
    r.fail("chat.video_prompt", "must contain {video} and, after it, {question}");

  m.frame_prompt = r.get_or<std::string>(r.at(j, "chat", ""), "frame_prompt", "chat.", "");
  if (m.architecture == Architecture::Qwen3_VL && (m.frame_prompt.find("{seconds}") == std::string::npos ||
                                                   m.frame_prompt.find("{frame}") == std::string::npos))
    r.fail("chat.frame_prompt", "must contain {seconds} and {frame} (Qwen3-VL writes each temporal patch's time)");

  const json& f = r.at(j, "files", "");
  m.tokenizer_file = m.path(r.get<std::string>(f, "tokenizer", "files."), "files.tokenizer");
  m.text_file = m.path(r.get<std::string>(f, "text", "files."), "files.text");
  m.vision_file = m.path(r.get<std::string>(f, "vision", "files."), "files.vision");
  const auto layers = r.get<std::vector<std::string>>(f, "layers", "files.");
  if (static_cast<int64_t>(layers.size()) != m.text.num_layers)
    r.fail("files.layers", "lists " + std::to_string(layers.size()) + " files for " +
                               std::to_string(m.text.num_layers) + " layers");
  for (size_t i = 0; i < layers.size(); ++i)
    m.layer_files.push_back(m.path(layers[i], "files.layers[" + std::to_string(i) + "]"));
  return m;
}

}  // namespace svqa
