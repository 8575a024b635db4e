// posecast regress: goldens written and matched, a planted divergence reported with its tick,
// entity, worst joint and size and a non-zero exit, missing goldens, JUnit XML.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "posecast/replay/regression.h"
#include "replay_test_support.h"

namespace posecast::test {
namespace {

namespace fs = std::filesystem;

ModelLoader any_source_loader() {
  return [](const std::string& source) -> Result<std::shared_ptr<const Model>> {
    Result<Model> m = rig::load_model_source(source);
    if (!m) return m.error();
    return std::make_shared<const Model>(std::move(m.value()));
  };
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void replace_in_file(const fs::path& p, const std::string& from, const std::string& to) {
  std::string text = read_text(p);
  const std::size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  std::ofstream(p) << text;
}

// A private copy of the project's suite (generated-rig scenarios only).
struct SuiteCopy {
  SuiteCopy() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::temp_directory_path() / ("posecast_regress_" + std::string(info->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path source = fs::path(POSECAST_SOURCE_DIR) / "tests" / "regress";
    for (const char* name : {"locomotion", "layers"}) {
      for (const char* ext : {".json", ".hashes", ".pcrec"}) {
        fs::copy_file(source / (std::string(name) + ext), dir / (std::string(name) + ext));
      }
    }
  }
  ~SuiteCopy() { fs::remove_all(dir); }
  std::vector<ScenarioOutcome> run(RegressOptions options = {}) const {
    std::vector<ScenarioOutcome> out;
    Result<std::vector<std::string>> found = find_scenarios(dir.string());
    EXPECT_TRUE(found.ok());
    for (const std::string& p : found.value()) out.push_back(run_regression(p, dir.string(), any_source_loader(), options));
    return out;
  }
  fs::path dir;
};

TEST(Regress, TheProjectSuitePassesWithOneAndTwoThreads) {
  SuiteCopy suite;
  // Every scenario in the folder is found and run (an empty find would pass vacuously).
  std::size_t scenarios = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(suite.dir)) scenarios += e.path().extension() == ".json";
  ASSERT_EQ(scenarios, 2u);  // the generated-rig scenarios SuiteCopy copies
  for (unsigned threads : {1u, 2u}) {
    const std::vector<ScenarioOutcome> outcomes = suite.run(RegressOptions{threads, false, 60});
    ASSERT_EQ(outcomes.size(), scenarios) << threads << " threads";
    for (const ScenarioOutcome& o : outcomes) {
      EXPECT_EQ(o.result, RegressResult::kPass) << o.name << ": " << o.details;
    }
  }
}

TEST(Regress, PlantedDivergenceNamesTickEntityJointAndSize) {
  SuiteCopy suite;
  // Entity 5's speed change at tick 70 becomes 0.55 instead of 0.5; the goldens stay.
  replace_in_file(suite.dir / "locomotion.json", R"("entity": 5, "speed": 0.5 })", R"("entity": 5, "speed": 0.55 })");
  const std::vector<ScenarioOutcome> outcomes = suite.run();
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].name, "layers");
  EXPECT_EQ(outcomes[0].result, RegressResult::kPass);
  const ScenarioOutcome& o = outcomes[1];
  EXPECT_EQ(o.result, RegressResult::kDiverged);
  EXPECT_TRUE(is_failure(o.result));
  // The new speed moves the entity differently from tick 70's advance on (its root transform,
  // in the world hash: no palette differs yet), and shows in its palette from tick 71 on; the
  // worst joint is named at the palette checkpoint.
  EXPECT_EQ(o.first_divergence.rfind("tick 70; joint ", 0), 0u) << o.first_divergence;
  EXPECT_NE(o.first_divergence.find(" off by "), std::string::npos) << o.first_divergence;
  EXPECT_NE(o.details.find("tick 70: world hash "), std::string::npos) << o.details;
  EXPECT_NE(o.details.find(": entity 5, joint "), std::string::npos) << o.details;
  EXPECT_NE(o.details.find("model units"), std::string::npos) << o.details;
  EXPECT_NE(o.details.find("compared with the golden palettes"), std::string::npos) << o.details;

  const std::string table = format_table(outcomes);
  EXPECT_NE(table.find("locomotion"), std::string::npos);
  EXPECT_NE(table.find("DIVERGED"), std::string::npos);
  const std::string xml = junit_xml(outcomes, "suite", 1.0);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"posecast.regress\" name=\"locomotion\""), std::string::npos);
  EXPECT_NE(xml.find("<failure message=\"tick 70; joint"), std::string::npos) << xml;
}

TEST(Regress, CommandLineExitsNonZeroOnADivergenceAndWritesJUnit) {
  SuiteCopy suite;
  replace_in_file(suite.dir / "layers.json", R"("weight": 0.3 })", R"("weight": 0.35 })");
  const fs::path junit = suite.dir / "out.xml";
  const std::string command = std::string(POSECAST_CLI) + " regress " + suite.dir.string() + " --junit " +
                              junit.string() + " > " + (suite.dir / "out.txt").string();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const std::string out = read_text(suite.dir / "out.txt");
  EXPECT_NE(out.find("scenario"), std::string::npos);
  EXPECT_NE(out.find("layers"), std::string::npos);
  EXPECT_NE(out.find("DIVERGED    tick 60 entity 10"), std::string::npos) << out;
  EXPECT_NE(read_text(junit).find("<failure"), std::string::npos);
}

TEST(Regress, MissingGoldenFailsAndUpdateCreatesIt) {
  SuiteCopy suite;
  fs::remove(suite.dir / "layers.hashes");
  fs::remove(suite.dir / "layers.pcrec");
  std::vector<ScenarioOutcome> outcomes = suite.run();
  EXPECT_EQ(outcomes[0].result, RegressResult::kNoGolden);
  RegressOptions update;
  update.update = true;
  outcomes = suite.run(update);
  for (const ScenarioOutcome& o : outcomes) EXPECT_EQ(o.result, RegressResult::kUpdated) << o.details;
  for (const ScenarioOutcome& o : suite.run()) EXPECT_EQ(o.result, RegressResult::kPass) << o.name << o.details;
  // The rewritten golden equals the committed one: --update is deterministic.
  EXPECT_EQ(read_text(suite.dir / "layers.hashes"),
            read_text(fs::path(POSECAST_SOURCE_DIR) / "tests" / "regress" / "layers.hashes"));
}

TEST(Regress, FinalHashesOnlyGoldensFromTheDeterminismMatrixAreAccepted) {
  Result<Golden> g = parse_golden("# comment\nticks 90\nfinal_world_hash ecd99efe39827393\nrun_hash be8d0e94f3ab97fe\n", "x.hashes");
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_TRUE(g->per_tick.empty());
  EXPECT_EQ(g->final_world_hash, 0xecd99efe39827393ull);
  Result<Golden> bad = parse_golden("ticks 2\nfinal_world_hash 1\nrun_hash 2\ntick 0 aa 1:zz\n", "y.hashes");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("y.hashes:4: tick 0: '1:zz' is not ID:HASH"), std::string::npos) << bad.error().message;
}

}  // namespace
}  // namespace posecast::test
