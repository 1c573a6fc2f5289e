#pragma once
// Small line/scatter plots written as PNG with OpenCV (already a dependency for video), for
// `svqa report`: axes with round-number ticks, one colour per series, a legend.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace svqa {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y;  // drawn in the given order
  bool markers = true;       // a dot at every point
};

struct LinePlot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  std::optional<std::pair<double, double>> y_range;  // fixed y axis (accuracy: 0-100); empty: the data's
  std::optional<double> marker_x;  // a dashed vertical line (e.g. the question's time)
  std::string marker_label;
};

// Renders `plot` (960 x 600) and writes it atomically to `png_path`. Throws std::runtime_error
// naming the path when there is nothing to draw or the file cannot be written.
void write_line_plot(const LinePlot& plot, const std::string& png_path);

}  // namespace svqa
