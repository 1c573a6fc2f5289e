#include "benchmarks/datasets/synthetic_video.h"

#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <cmath>
#include <stdexcept>

namespace svqa {
namespace {

const std::array<cv::Scalar, kSyntheticColors.size()> kBgr{
    cv::Scalar(40, 40, 220), cv::Scalar(40, 200, 40), cv::Scalar(220, 60, 30),
    cv::Scalar(30, 220, 230), cv::Scalar(200, 40, 160), cv::Scalar(220, 220, 40)};

size_t phase_at(double t, const SyntheticVideoOptions& o) {
  return static_cast<size_t>(std::floor(t / o.phase_seconds)) % kSyntheticColors.size();
}

}  // namespace

std::string synthetic_color_at(double t, const SyntheticVideoOptions& o) { return kSyntheticColors[phase_at(t, o)]; }

void write_synthetic_video(const std::string& path, const SyntheticVideoOptions& o) {
  cv::VideoWriter writer(path, cv::CAP_OPENCV_MJPEG, cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), o.fps,
                         cv::Size(o.width, o.height));
  if (!writer.isOpened()) throw std::runtime_error(path + ": cannot open for writing (MJPEG .avi)");
  const int frames = static_cast<int>(std::round(o.seconds * o.fps));
  for (int i = 0; i < frames; ++i) {
    const double t = i / o.fps;
    cv::Mat frame(o.height, o.width, CV_8UC3, kBgr[phase_at(t, o)]);
    const double progress = std::fmod(t, o.phase_seconds) / o.phase_seconds;
    const int side = o.height / 4;
    const int x = static_cast<int>(progress * (o.width - side));
    cv::rectangle(frame, cv::Rect(x, o.height / 2 - side / 2, side, side), cv::Scalar(255, 255, 255), cv::FILLED);
    cv::putText(frame, std::to_string(static_cast<int>(t)) + " s", cv::Point(8, 28), cv::FONT_HERSHEY_SIMPLEX, 0.8,
                cv::Scalar(0, 0, 0), 2);
    writer.write(frame);
  }
}

}  // namespace svqa
