#pragma once
// Small line/scatter plots written as PNG with OpenCV (already a dependency for video), for
// `svqa report`: axes with round-number ticks, a legend. Each series has its own colour, line
// pattern (solid, dashed, dotted) and marker shape, so series drawn over each other stay visible;
// a series whose points coincide with an earlier one's says so in the legend. Legend labels wrap,
// never cut.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace svqa {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y;  // drawn in the given order
  bool markers = true;       // a marker at every point
  std::vector<std::string> point_labels;  // optional: a small label beside each point (e.g. its run's settings)
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

// `text` broken into lines of at most `width` pixels at OpenCV's simplex font `scale`: after a
// space or comma where one fits, else after '_' or '=', else mid-word. Nothing is dropped but the
// spaces at the breaks.
std::vector<std::string> wrap_text(const std::string& text, int width, double scale);

// For each series, the index of an earlier series drawn at the same points (within `pixels`
// after scaling to the plot), or -1.
std::vector<int> coinciding_series(const std::vector<std::vector<std::pair<int, int>>>& points, int pixels = 2);

}  // namespace svqa
