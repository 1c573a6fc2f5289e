#include "models/video/frame_preprocessor.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "models/video/frame_indices.h"

namespace svqa {
namespace {

// Python's round(): halves to even (std::nearbyint in the default rounding mode).
int64_t round_half_even(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

// torchvision's resize (antialiased bicubic or bilinear, align_corners=False) of uint8 [F, 3, H, W],
// as the HF processors call it: on CPU LibTorch resizes uint8 natively; elsewhere torchvision goes
// through float32 and clamps and rounds back to uint8.
at::Tensor resize_like_torchvision(const at::Tensor& frames, int64_t height, int64_t width,
                                   ImageSpec::Interpolation interpolation = ImageSpec::Interpolation::Bicubic) {
  if (frames.size(2) == height && frames.size(3) == width) return frames;  // torchvision returns the input
  const auto resize = [&](const at::Tensor& x) {
    return interpolation == ImageSpec::Interpolation::Bilinear
               ? at::_upsample_bilinear2d_aa(x, {height, width}, /*align_corners=*/false)
               : at::_upsample_bicubic2d_aa(x, {height, width}, /*align_corners=*/false);
  };
  if (frames.is_cpu()) return resize(frames);
  return resize(frames.to(at::kFloat)).clamp_(0, 255).round_().to(at::kByte);
}

// HF's shortest-edge resize (get_resize_output_image_size, default_to_square=False): the short
// side to `edge`, the long side int(edge * long / short); then torchvision's centre crop, offsets
// int((size - crop) / 2). CLIP's crop is never larger than the resized frame (crop <= edge).
at::Tensor resize_shortest_edge_and_crop(const at::Tensor& frames, const ImageSpec& spec) {
  const int64_t h = frames.size(2), w = frames.size(3), edge = spec.shortest_edge;
  const int64_t short_side = std::min(h, w), long_side = std::max(h, w);
  const auto long_new = static_cast<int64_t>(static_cast<double>(edge) * static_cast<double>(long_side) /
                                             static_cast<double>(short_side));
  const int64_t nh = w <= h ? long_new : edge, nw = w <= h ? edge : long_new;
  if (spec.height > nh || spec.width > nw)
    throw std::invalid_argument("preprocess_frames: crop " + std::to_string(spec.width) + "x" +
                                std::to_string(spec.height) + " is larger than the resized frame " +
                                std::to_string(nw) + "x" + std::to_string(nh));
  const auto resized = resize_like_torchvision(frames, nh, nw, spec.interpolation);
  const auto top = static_cast<int64_t>(static_cast<double>(nh - spec.height) / 2.0);
  const auto left = static_cast<int64_t>(static_cast<double>(nw - spec.width) / 2.0);
  return resized.narrow(2, top, spec.height).narrow(3, left, spec.width);
}

// HF's fused rescale + normalise: mean and std are float32, scaled by 1 / rescale_factor, then
// (x - mean) / std on the float32 image — the same operations in the same order.
at::Tensor rescale_and_normalize(const at::Tensor& frames, const ImageSpec& spec) {
  const auto options = at::TensorOptions().dtype(at::kFloat).device(frames.device());
  auto channel_tensor = [&](const std::array<double, 3>& v) {
    const std::array<float, 3> f{static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
    return at::tensor(at::ArrayRef<float>(f.data(), f.size()), options).mul(1.0 / spec.rescale_factor).view({3, 1, 1});
  };
  return frames.to(at::kFloat).sub_(channel_tensor(spec.mean)).div_(channel_tensor(spec.std));
}

// Qwen2VLVideoProcessor.patchify: pad to whole temporal patches with copies of the last frame,
// then rows of (channel, t, y, x) values ordered by (t, merge row, merge column, row in merge
// group, column in merge group).
VisualInput patchify_qwen(at::Tensor frames, const ImageSpec& spec) {
  const int64_t tp = spec.temporal_patch_size, p = spec.patch_size, m = spec.merge_size;
  if (const int64_t pad = (tp - frames.size(0) % tp) % tp; pad > 0)
    frames = at::cat({frames, frames.narrow(0, frames.size(0) - 1, 1).expand({pad, -1, -1, -1})}, 0);
  const int64_t channels = frames.size(1), grid_t = frames.size(0) / tp;
  const int64_t grid_h = frames.size(2) / p, grid_w = frames.size(3) / p;
  const at::Tensor patches = frames.reshape({grid_t, tp, channels, grid_h / m, m, p, grid_w / m, m, p})
                                 .permute({0, 3, 6, 4, 7, 2, 1, 5, 8})
                                 .reshape({grid_t * grid_h * grid_w, channels * tp * p * p});
  return {patches, {grid_t, grid_h, grid_w}};
}

}  // namespace

namespace {

void check_aspect(double h, double w, int64_t height, int64_t width) {
  if (std::max(h, w) / std::min(h, w) > 200)
    throw std::invalid_argument("frames of " + std::to_string(width) + "x" + std::to_string(height) +
                                ": aspect ratio above 200 (Qwen's smart_resize refuses it)");
}

// The rule both smart_resizes share: sides rounded (halves to even) to multiples of `factor`, then,
// if t_bar · h · w leaves [min_pixels, max_pixels], scaled by beta (t the clip's frame count).
std::pair<int64_t, int64_t> fit_pixels(double t, int64_t t_bar, double h, double w, int64_t factor, int64_t min_pixels,
                                       double max_pixels) {
  const auto f = static_cast<double>(factor);
  int64_t h_bar = round_half_even(h / f) * factor;
  int64_t w_bar = round_half_even(w / f) * factor;
  if (static_cast<double>(t_bar * h_bar * w_bar) > max_pixels) {
    const double beta = std::sqrt(t * h * w / max_pixels);
    h_bar = std::max(factor, static_cast<int64_t>(std::floor(h / beta / f)) * factor);
    w_bar = std::max(factor, static_cast<int64_t>(std::floor(w / beta / f)) * factor);
  } else if (t_bar * h_bar * w_bar < min_pixels) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / (t * h * w));
    h_bar = static_cast<int64_t>(std::ceil(h * beta / f)) * factor;
    w_bar = static_cast<int64_t>(std::ceil(w * beta / f)) * factor;
  }
  return {h_bar, w_bar};
}

}  // namespace

std::pair<int64_t, int64_t> qwen_smart_resize(int64_t height, int64_t width, int64_t factor, int64_t min_pixels,
                                              double max_pixels) {
  const auto h = static_cast<double>(height), w = static_cast<double>(width);
  check_aspect(h, w, height, width);
  return fit_pixels(1.0, 1, h, w, factor, min_pixels, max_pixels);
}

std::pair<int64_t, int64_t> qwen3_smart_resize(int64_t frames, int64_t height, int64_t width, int64_t temporal_factor,
                                               int64_t factor, int64_t min_pixels, int64_t max_pixels) {
  if (frames < temporal_factor)
    throw std::invalid_argument("Qwen3-VL preprocessing: " + std::to_string(frames) + " frame(s); a clip needs at least " +
                                std::to_string(temporal_factor) + " (one temporal patch)");
  double h = static_cast<double>(height), w = static_cast<double>(width);
  if (height < factor || width < factor) {  // HF: int(side * scale), scale = max(factor / h, factor / w)
    const double scale = std::max(static_cast<double>(factor) / h, static_cast<double>(factor) / w);
    h = static_cast<double>(static_cast<int64_t>(h * scale));
    w = static_cast<double>(static_cast<int64_t>(w * scale));
  }
  check_aspect(h, w, height, width);
  const int64_t t_bar = round_half_even(static_cast<double>(frames) / static_cast<double>(temporal_factor)) * temporal_factor;
  return fit_pixels(static_cast<double>(frames), t_bar, h, w, factor, min_pixels, static_cast<double>(max_pixels));
}

at::Tensor normalized_frames(const at::Tensor& rgb, const ImageSpec& spec, int64_t clip_frames) {
  if (rgb.scalar_type() != at::kByte || rgb.dim() != 4 || rgb.size(3) != 3 || rgb.size(0) == 0)
    throw std::invalid_argument(std::string("preprocess_frames: expected uint8 frames [F, H, W, 3] with F >= 1, got ") +
                                std::string(c10::getDtypeNames(rgb.scalar_type()).first) + " " + c10::str(rgb.sizes()));
  const at::Tensor frames = rgb.permute({0, 3, 1, 2}).contiguous();  // [F, 3, H, W], as HF's processors
  if (spec.resize == ImageSpec::Resize::Fixed)
    return rescale_and_normalize(resize_like_torchvision(frames, spec.height, spec.width, spec.interpolation), spec);
  if (spec.resize == ImageSpec::Resize::ShortestEdgeCrop)
    return rescale_and_normalize(resize_shortest_edge_and_crop(frames, spec), spec);

  if (spec.factor != spec.patch_size * spec.merge_size)
    throw std::invalid_argument("preprocess_frames: factor " + std::to_string(spec.factor) +
                                " must be patch_size * merge_size = " +
                                std::to_string(spec.patch_size * spec.merge_size));
  const int64_t clip = clip_frames > 0 ? clip_frames : frames.size(0);
  const auto [height, width] = qwen_processor_size(frames.size(2), frames.size(3), clip, spec);
  return rescale_and_normalize(resize_like_torchvision(frames, height, width), spec);
}

VisualInput clip_input(const at::Tensor& normalized, const ImageSpec& spec) {
  if (spec.resize == ImageSpec::Resize::QwenSmart || spec.resize == ImageSpec::Resize::Qwen3Smart)
    return patchify_qwen(normalized, spec);
  return {normalized, {0, 0, 0}};
}

VisualInput preprocess_frames(const at::Tensor& rgb, const ImageSpec& spec, int64_t clip_frames) {
  return clip_input(normalized_frames(rgb, spec, clip_frames), spec);
}

std::pair<int64_t, int64_t> qwen_processor_size(int64_t height, int64_t width, int64_t clip_frames,
                                                const ImageSpec& spec) {
  if (spec.qwen_vl_utils) {
    QwenVideoPixels pixels = *spec.qwen_vl_utils;
    pixels.factor = spec.factor;
    const auto [h, w] = qwen_video_frame_size(height, width, clip_frames, pixels);
    if (spec.resize == ImageSpec::Resize::Qwen3Smart) return {h, w};  // the processor told do_resize=False
    height = h, width = w;  // Qwen2.5-VL's processor resizes what fetch_video gave it (the same size, in bounds)
  }
  if (spec.resize == ImageSpec::Resize::Qwen3Smart)
    return qwen3_smart_resize(clip_frames, height, width, spec.temporal_patch_size, spec.factor, spec.min_pixels,
                              spec.max_pixels);
  return qwen_smart_resize(height, width, spec.factor, spec.min_pixels, static_cast<double>(spec.max_pixels));
}

}  // namespace svqa
