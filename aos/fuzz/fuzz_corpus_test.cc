// Replays every checked-in fuzz corpus (aos/fuzz/testdata/*_corpus) through
// its step with the normal build, and deterministic mutations of each input,
// so an input that once broke a parser stays fixed and the steps' round-trip
// properties are checked on every test run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "aos/fuzz/fuzz_steps.h"
#include "aos/testing/path.h"
#include "gtest/gtest.h"

namespace aos::fuzz {
namespace {

std::vector<std::vector<uint8_t>> Corpus(const std::string& name) {
  const std::filesystem::path directory =
      aos::testing::ArtifactPath("aos/fuzz/testdata/" + name);
  std::vector<std::vector<uint8_t>> inputs;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    std::ifstream in(entry.path(), std::ios::binary);
    inputs.emplace_back(std::istreambuf_iterator<char>(in),
                        std::istreambuf_iterator<char>());
  }
  return inputs;
}

// Each input, then variants of it (bytes flipped, inserted, removed or the
// input cut, from a fixed seed): `budget` steps in all, spread over the
// corpus, at least one variant per input. Returns how many steps accepted their
// input (so that the round-trip checks behind acceptance ran).
template <typename Step>
size_t Replay(const std::vector<std::vector<uint8_t>>& corpus, size_t budget,
              Step step) {
  const int mutations =
      static_cast<int>(std::max<size_t>(1, budget / corpus.size()));
  std::mt19937 random(971);
  size_t accepted = 0;
  for (const std::vector<uint8_t>& input : corpus) {
    accepted += static_cast<size_t>(step(input));
    for (int i = 0; i < mutations; ++i) {
      std::vector<uint8_t> mutated = input;
      const int edits = 1 + static_cast<int>(random() % 4);
      for (int e = 0; e < edits && !mutated.empty(); ++e) {
        const size_t at = random() % mutated.size();
        switch (random() % 4) {
          case 0:
            mutated[at] = static_cast<uint8_t>(random());
            break;
          case 1:
            mutated.insert(mutated.begin() + static_cast<ptrdiff_t>(at),
                           static_cast<uint8_t>(random()));
            break;
          case 2:
            mutated.erase(mutated.begin() + static_cast<ptrdiff_t>(at));
            break;
          default:
            mutated.resize(at);
        }
      }
      accepted += static_cast<size_t>(step(mutated));
    }
  }
  return accepted;
}

TEST(FuzzCorpusTest, Json) {
  const auto corpus = Corpus("json_corpus");
  ASSERT_FALSE(corpus.empty());
  EXPECT_GE(
      Replay(corpus, 20000,
             [](const std::vector<uint8_t>& input) { return JsonStep(input); }),
      5u)
      << "the round-trip checks behind acceptance hardly ran";
}

TEST(FuzzCorpusTest, TimingReport) {
  const auto corpus = Corpus("timing_report_corpus");
  ASSERT_FALSE(corpus.empty());
  EXPECT_GE(Replay(corpus, 50000,
                   [](const std::vector<uint8_t>& input) {
                     return TimingReportStep(input);
                   }),
            5u)
      << "the round-trip checks behind acceptance hardly ran";
}

TEST(FuzzCorpusTest, Config) {
  const auto corpus = Corpus("config_corpus");
  ASSERT_FALSE(corpus.empty());
  const std::string directory = aos::testing::TestTempDir() + "/config_fuzz";
  std::filesystem::create_directories(directory);
  EXPECT_GE(Replay(corpus, 5000,
                   [&](const std::vector<uint8_t>& input) {
                     return ConfigStep(input, directory);
                   }),
            5u)
      << "the round-trip checks behind acceptance hardly ran";
}

TEST(FuzzCorpusTest, Mcap) {
  const auto corpus = Corpus("mcap_corpus");
  ASSERT_FALSE(corpus.empty());
  const std::string path = aos::testing::TestTempDir() + "/fuzz.mcap";
  EXPECT_GE(Replay(corpus, 5000,
                   [&](const std::vector<uint8_t>& input) {
                     return McapStep(input, path);
                   }),
            5u)
      << "hardly any input opened as an aos log";
}

}  // namespace
}  // namespace aos::fuzz
