#include "models/frame_source.h"

#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "models/npy.h"

namespace svqa {
namespace {

namespace fs = std::filesystem;

std::runtime_error source_error(const std::string& path, const std::string& what) {
  return std::runtime_error(path + ": " + what);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string size_text(int64_t width, int64_t height) { return std::to_string(width) + "x" + std::to_string(height); }

// Frames of one size, appended one by one into a uint8 [capacity, H, W, 3] tensor sized from an
// estimate (a video's stated frame count) and grown when it was short: memory stays near one copy
// of the frames, where collecting them and stacking at the end would need two.
class FrameBuffer {
 public:
  FrameBuffer(int64_t height, int64_t width, int64_t expected)
      : frames_(at::empty({initial_capacity(height, width, expected), height, width, 3}, at::kByte)) {}

  // A BGR image converted straight into the next frame's memory.
  void push_bgr(const cv::Mat& bgr) {
    if (count_ == frames_.size(0)) {
      at::Tensor bigger = at::empty({count_ + count_ / 2 + 1, frames_.size(1), frames_.size(2), 3}, at::kByte);
      bigger.narrow(0, 0, count_).copy_(frames_.narrow(0, 0, count_));
      frames_ = bigger;
    }
    cv::Mat rgb(static_cast<int>(frames_.size(1)), static_cast<int>(frames_.size(2)), CV_8UC3,
                frames_[count_].data_ptr());
    cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
    ++count_;
  }
  int64_t height() const { return frames_.size(1); }
  int64_t width() const { return frames_.size(2); }
  int64_t count() const { return count_; }
  // A view when little capacity is unused, else a compact copy.
  at::Tensor take() {
    const at::Tensor used = frames_.narrow(0, 0, count_);
    return count_ * 4 >= frames_.size(0) * 3 ? used : used.clone();
  }

 private:
  // Stated frame counts can be wrong (0, or absurd for broken headers): trust them up to 2 GiB.
  static int64_t initial_capacity(int64_t height, int64_t width, int64_t expected) {
    const int64_t frame_bytes = std::max<int64_t>(height * width * 3, 1);
    return std::clamp<int64_t>(expected, 1, std::max<int64_t>(1, (int64_t{2} << 30) / frame_bytes));
  }

  at::Tensor frames_;
  int64_t count_ = 0;
};

// OpenCV and FFmpeg log decoder complaints to stderr; svqa reports its own one-line errors. Their
// own variables still turn the logs on: OPENCV_LOG_LEVEL, OPENCV_FFMPEG_LOGLEVEL (e.g. 24 = warnings).
void quiet_opencv() {
  static const bool once = [] {
    if (!std::getenv("OPENCV_LOG_LEVEL")) cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    // Read by OpenCV when it first opens a file with FFmpeg; -8 is AV_LOG_QUIET.
    ::setenv("OPENCV_FFMPEG_LOGLEVEL", "-8", /*overwrite=*/0);
    return true;
  }();
  (void)once;
}

Frames read_video(const std::string& path, double target_fps) {
  quiet_opencv();
  // FFmpeg only: other backends (GStreamer) print their own warnings and differ in frame rates.
  cv::VideoCapture capture(path, cv::CAP_FFMPEG);
  if (!capture.isOpened()) throw source_error(path, "cannot open as a video (expected a file FFmpeg can decode)");
  const double avg_fps = capture.get(cv::CAP_PROP_FPS);
  if (!std::isfinite(avg_fps) || avg_fps <= 0)
    throw source_error(path, "the video states no frame rate (expected a positive average fps)");
  const int64_t step = video_frame_step(avg_fps, target_fps);
  const auto stated_frames = static_cast<int64_t>(capture.get(cv::CAP_PROP_FRAME_COUNT));

  Frames out;
  out.fps = avg_fps / static_cast<double>(step);
  std::unique_ptr<FrameBuffer> buffer;
  cv::Mat bgr;
  for (int64_t index = 0;; ++index) {
    // grab() decodes; only kept frames pay for retrieve()'s conversion to BGR.
    if (!capture.grab()) break;
    if (index % step != 0) continue;
    if (!capture.retrieve(bgr) || bgr.empty()) break;
    if (bgr.type() != CV_8UC3)
      throw source_error(path, "frame " + std::to_string(index) + " is not 8-bit 3-channel (expected BGR from OpenCV)");
    if (!buffer) buffer = std::make_unique<FrameBuffer>(bgr.rows, bgr.cols, (stated_frames + step - 1) / step);
    if (bgr.rows != buffer->height() || bgr.cols != buffer->width())
      throw source_error(path, "frame " + std::to_string(index) + " is " + size_text(bgr.cols, bgr.rows) +
                                   ", expected " + size_text(buffer->width(), buffer->height()) + " as frame 0");
    buffer->push_bgr(bgr);
    out.timestamps.push_back(static_cast<double>(index) / avg_fps);
  }
  if (!buffer) throw source_error(path, "no frame could be decoded (expected a video; is the file corrupt?)");
  out.rgb = buffer->take();
  return out;
}

Frames read_npy_frames(const std::string& path, double target_fps) {
  Frames out;
  out.rgb = read_npy(path);
  const auto sizes = out.rgb.sizes();
  if (out.rgb.scalar_type() != at::kByte || out.rgb.dim() != 4 || sizes[3] != 3 || sizes[0] == 0 ||
      sizes[1] == 0 || sizes[2] == 0) {
    throw source_error(path, "expected uint8 frames [N, H, W, 3] (RGB, N, H, W >= 1), got " +
                                 std::string(c10::getDtypeNames(out.rgb.scalar_type()).first) + " " + c10::str(sizes));
  }
  out.fps = target_fps;
  for (int64_t i = 0; i < sizes[0]; ++i) out.timestamps.push_back(static_cast<double>(i) / target_fps);
  return out;
}

bool is_image_file(const fs::path& p) {
  static const char* const kExtensions[] = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".ppm", ".pgm"};
  const std::string ext = lower(p.extension().string());
  return std::any_of(std::begin(kExtensions), std::end(kExtensions), [&](const char* e) { return ext == e; });
}

Frames read_image_directory(const std::string& dir, double target_fps) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().filename().string()[0] != '.' && is_image_file(entry.path()))
      files.push_back(entry.path());
  if (files.empty())
    throw source_error(dir, "no image files (expected .jpg, .jpeg, .png, .bmp, .webp, .tif, .tiff, .ppm or .pgm)");
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });

  Frames out;
  out.fps = target_fps;
  std::unique_ptr<FrameBuffer> buffer;
  for (const auto& file : files) {
    const cv::Mat bgr = cv::imread(file.string(), cv::IMREAD_COLOR);  // gray and alpha become 3-channel BGR
    if (bgr.empty()) throw source_error(file.string(), "cannot decode the image");
    if (!buffer) buffer = std::make_unique<FrameBuffer>(bgr.rows, bgr.cols, static_cast<int64_t>(files.size()));
    if (bgr.rows != buffer->height() || bgr.cols != buffer->width())
      throw source_error(file.string(), "image is " + size_text(bgr.cols, bgr.rows) + ", expected " +
                                            size_text(buffer->width(), buffer->height()) + " as " +
                                            files.front().filename().string() + " (all frames one size)");
    out.timestamps.push_back(static_cast<double>(buffer->count()) / target_fps);
    buffer->push_bgr(bgr);
  }
  out.rgb = buffer->take();
  return out;
}

}  // namespace

int64_t video_frame_step(double avg_fps, double target_fps) {
  // std::nearbyint rounds halves to even, as Python's round() in the reference code.
  return std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(avg_fps / target_fps)));
}

Frames read_frames(const std::string& path, double target_fps) {
  if (!std::isfinite(target_fps) || target_fps <= 0)
    throw std::invalid_argument("target fps must be positive, got " + std::to_string(target_fps));
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw source_error(path, "file not found");
  if (fs::is_directory(status)) return read_image_directory(path, target_fps);
  if (lower(fs::path(path).extension().string()) == ".npy") return read_npy_frames(path, target_fps);
  return read_video(path, target_fps);
}

}  // namespace svqa
