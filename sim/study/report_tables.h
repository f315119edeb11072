#pragma once

// The HTML report's tables (html_report.h): cells, tables, and the headline tables of runs,
// of the points of sweeps, comparisons and capacity searches, and of a capacity search's
// answers and Pareto front.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace servesim {

// A number for a table: integers whole, others to four significant digits in fixed point,
// never an exponent.
std::string number_text(double value);
// A table: a header row and body rows; a cell that reads as a number is right-aligned.
std::string table_html(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows);
std::string details_html(const std::string& summary, const std::string& body);

// A run's headline: its latencies in ms, its load and its KV memory shares.
std::string run_headline(const nlohmann::json& summary);

// A CSV file servesim wrote, as its header and rows.
struct CsvData {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
CsvData read_csv(const std::filesystem::path& path);
// The headline of a table of points: its key columns, then the figures most studies are read
// by, named as the console's tables name them.
std::string points_headline(const CsvData& csv, const std::vector<std::string>& keys);
// The whole CSV file, folded.
std::string csv_details(const std::filesystem::path& path, const std::string& name);
// The best deployments of a capacity search with --target-rate and the Pareto front of a
// layout search, named as the console names them.
std::string capacity_answers(const nlohmann::json& summary);

}  // namespace servesim
