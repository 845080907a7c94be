// Timing and reporting helpers of dnnk-bench.
#ifndef DNNK_BENCH_UTIL_H
#define DNNK_BENCH_UTIL_H

#include <functional>
#include <string>
#include <vector>

namespace bench {

// Run-wide settings chosen on the command line.
struct Options {
  bool quick = false; // fewer sizes and repetitions (< 30 s in total)
  std::string csv;    // CSV output path, empty for none
  int threads = 1;    // threads every library is given
  std::string layers; // comma-separated layer tags to run, empty for all
};

// Median wall time (s) of f over at least reps runs and min_seconds in all,
// after one untimed warm-up run.
double median_seconds(const std::function<void()> &f, int reps,
                      double min_seconds);

// Medians (s) of several functions timed in alternation, one run of each
// per round with settle() in between, for at least reps rounds and until
// the first has run min_seconds: load from other processes then hits every
// library alike, and the ratios stay meaningful on a shared machine.
std::vector<double>
median_interleaved(const std::vector<std::function<void()>> &fs, int reps,
                   double min_seconds);

// Two functions timed warm and paired: per round, each runs `calls` times in
// a row after settle() and one untimed call, the order alternating from
// round to round. Returns each round's pair of medians (s), {first, second}:
// drift between rounds hits both alike, so their ratio is steadier than one
// of cold, interleaved single calls.
std::vector<std::pair<double, double>>
paired_rounds(const std::function<void()> &first,
              const std::function<void()> &second, int rounds, int calls);

// Median of a vector of values.
double median_of(std::vector<double> v);

// Lets the other runtimes' spinning worker threads go to sleep before the
// next library is timed: on 2 cores a spinning pool halves the next one.
void settle();

// One result row: a section, a case, named values and their formatting.
struct Row {
  std::string section, name;
  std::vector<std::pair<std::string, double>> values;
};

// A Markdown table printed to stdout as rows arrive, kept for the CSV file.
class Report {
public:
  // Starts a section with its column headers and their printf formats.
  void section(const std::string &title, const std::string &first_column,
               const std::vector<std::string> &columns,
               const std::vector<std::string> &formats);
  // Prints one row of the current section and keeps it.
  void add(const std::string &name, const std::vector<double> &values);
  // Writes every row kept as CSV (section, case, column, value).
  bool write_csv(const std::string &path) const;

private:
  std::string title_;
  std::vector<std::string> columns_, formats_;
  std::vector<Row> rows_;
};

// Formats a double with a printf format.
std::string format(const char *fmt, double v);

} // namespace bench

#endif // DNNK_BENCH_UTIL_H
