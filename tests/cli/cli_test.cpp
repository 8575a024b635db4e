// The posecast binary as a user runs it: one clear line on stderr and a documented exit code for
// every kind of bad input; output shapes for info, eval and gen-rig.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the posecast binary with `args` (shell words, already quoted) and captures both streams.
CliRun run_posecast(const std::string& args) {
  // ctest runs these tests as parallel processes: one stderr file per process and call.
  static int calls = 0;
  const std::string err_path = testing::TempDir() + "posecast_cli_stderr_" +
                               std::to_string(getpid()) + "_" + std::to_string(++calls) + ".txt";
  const std::string command = std::string(POSECAST_CLI) + " " + args + " 2>" + err_path;
  CliRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) run.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (FILE* err = std::fopen(err_path.c_str(), "rb")) {
    while ((n = fread(buffer.data(), 1, buffer.size(), err)) > 0) run.err.append(buffer.data(), n);
    std::fclose(err);
  }
  std::remove(err_path.c_str());
  return run;
}

int line_count(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(Cli, NoArgumentsIsAUsageError) {
  const CliRun r = run_posecast("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "posecast: A subcommand is required\nRun with --help for more information.\n");
}

TEST(Cli, UnknownCommandIsAUsageError) {
  const CliRun r = run_posecast("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("posecast: unknown command 'frobnicate' (commands: info, eval, gen-rig, run, replay, regress)\n", 0), 0u)
      << r.err;
}

TEST(Cli, HelpListsEveryCommand) {
  const CliRun r = run_posecast("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: posecast [OPTIONS] SUBCOMMAND"), std::string::npos) << r.out;
  for (const char* command : {"info", "eval", "gen-rig", "run", "replay", "regress"}) {
    EXPECT_NE(r.out.find(std::string("\n  ") + command + " "), std::string::npos) << command;
  }
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* command : {"info", "eval", "gen-rig", "run", "replay", "regress"}) {
    const CliRun r = run_posecast(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find("Usage: posecast " + std::string(command) + " [OPTIONS]"), std::string::npos) << command;
    EXPECT_NE(r.out.find("Exit codes: 0 success, 1 the work failed, 2 bad command line."), std::string::npos)
        << command;
  }
}

// One line naming the command and the flag, then the pointer to --help; exit code 2.
TEST(Cli, BadFlagsAreOneLineNamingCommandAndFlag) {
  struct Case {
    const char* args;
    const char* first_line;
  };
  const Case cases[] = {
      {"gen-rig --joints 513 --out x.glb", "posecast gen-rig: --joints: 513 is not in 2..512"},
      {"run x.json --threads 0", "posecast run: --threads: 0 is not in 1..256"},
      {"replay x.pcrec --speed -1", "posecast replay: --speed: -1 is not in 0..1e+06"},
      {"regress d --palette-interval 0", "posecast regress: --palette-interval: 0 is not in 1..1048576"},
      {"eval gen-rig:4 --clip walk --time 1e10", "posecast eval: --time: 1e10 is not in -1e+09..1e+09"},
      {"info gen-rig:4 --bogus", "posecast info: The following argument was not expected: --bogus"},
      {"replay x.pcrec --from", "posecast replay: --from"},
  };
  for (const Case& c : cases) {
    const CliRun r = run_posecast(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err.rfind(c.first_line, 0), 0u) << c.args << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 2) << r.err;
    EXPECT_NE(r.err.find("\nRun with --help for more information.\n"), std::string::npos) << r.err;
  }
}

int file_lines(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  return lines;
}

// Every documented flag of every command, in runs that do real work on the project's
// regression scenario (generated rig, no sample assets needed).
TEST(Cli, EveryDocumentedFlagWorks) {
  const std::string regress = std::string(POSECAST_SOURCE_DIR) + "/tests/regress/";
  const std::string dir = testing::TempDir() + "posecast_cli_every_flag_" + std::to_string(getpid()) + "/";
  std::filesystem::create_directories(dir);

  EXPECT_EQ(run_posecast("info gen-rig:4").exit_code, 0);
  const CliRun eval = run_posecast("eval gen-rig:4 --clip walk --time 0.5 --skin 0 --json");
  EXPECT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_EQ(eval.out.rfind("{\"model\":\"gen-rig:4\",\"clip\":\"walk\",\"time\":0.5,", 0), 0u) << eval.out.substr(0, 100);
  const CliRun gen = run_posecast("gen-rig --joints 7 --out " + dir + "rig7.glb");
  EXPECT_EQ(gen.exit_code, 0) << gen.err;

  const CliRun run = run_posecast("run " + regress + "layers.json --ticks 30 --threads 2 --hashes " + dir +
                                  "run.hashes --no-progress");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("ticks 30 at 60 Hz"), std::string::npos) << run.out;
  EXPECT_EQ(file_lines(dir + "run.hashes"), 30);

  const CliRun replay = run_posecast("replay " + regress + "layers.pcrec --verify --from 10 --to 40 --speed 1000 --hashes " +
                                     dir + "replay.hashes --threads 2 --assets " + dir);
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_NE(replay.out.find("verify: all 31 ticks match the recording"), std::string::npos) << replay.out;
  EXPECT_EQ(file_lines(dir + "replay.hashes"), 31);

  // --update rewrites goldens: on a copy of one scenario.
  const std::string suite = dir + "suite/";
  std::filesystem::create_directories(suite);
  for (const char* file : {"layers.json", "layers.hashes", "layers.pcrec"}) {
    std::filesystem::copy_file(regress + file, suite + file, std::filesystem::copy_options::overwrite_existing);
  }
  const CliRun update = run_posecast("regress " + suite + " --update --junit " + dir + "junit.xml --threads 2 --palette-interval 30");
  EXPECT_EQ(update.exit_code, 0) << update.out << update.err;
  EXPECT_NE(std::ifstream(dir + "junit.xml").peek(), EOF);
  // The rewritten goldens pass unchanged.
  const CliRun check = run_posecast("regress " + suite);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  std::filesystem::remove_all(dir);
}

TEST(Cli, MissingModelFileIsOneLineFailure) {
  const CliRun r = run_posecast("info /nonexistent/model.glb");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/model.glb"), std::string::npos) << r.err;
}

TEST(Cli, GarbageFileIsOneLineFailureNotACrash) {
  // A GLB header (magic, version 2) whose length field is 0xffffffff, then junk. The length
  // passed to std::string is the literal's own (embedded NULs), not a hand count.
  static const char kGarbage[] = "glTF\x02\0\0\0\xff\xff\xff\xff junk";
  const std::string path = write_temp("garbage.glb", std::string(kGarbage, sizeof kGarbage - 1));
  const CliRun r = run_posecast("info " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.err), 1) << r.err;
  const std::string json_path =
      write_temp("garbage.gltf", "{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [{\"children\": [0]}]}");
  const CliRun json = run_posecast("info " + json_path);
  EXPECT_EQ(json.exit_code, 1) << json.out;
  EXPECT_EQ(line_count(json.err), 1) << json.err;
  std::remove(path.c_str());
  std::remove(json_path.c_str());
}

TEST(Cli, EvalRejectsBadArguments) {
  EXPECT_EQ(run_posecast("eval gen-rig:4 --clip walk").exit_code, 2);                 // no --time
  EXPECT_EQ(run_posecast("eval gen-rig:4 --clip walk --time abc").exit_code, 2);      // not a number
  EXPECT_EQ(run_posecast("eval gen-rig:4 --clip walk --time nan").exit_code, 2);      // not finite
  EXPECT_EQ(run_posecast("eval gen-rig:4 --clip sprint --time 0").exit_code, 2);      // no such clip
  EXPECT_EQ(run_posecast("eval gen-rig:4 --clip 99 --time 0").exit_code, 2);          // index out of range
  EXPECT_EQ(run_posecast("eval gen-rig:4 --clip walk --time 0 --skin 1").exit_code, 2);
  EXPECT_EQ(run_posecast("eval gen-rig:4 --clip walk --time 0 --bogus").exit_code, 2);
  EXPECT_EQ(run_posecast("eval gen-rig:1 --clip walk --time 0").exit_code, 1);        // N out of range
}

TEST(Cli, EvalJsonHasTheDocumentedShape) {
  const CliRun r = run_posecast("eval gen-rig:4 --clip run --time 0.25 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"model\":\"gen-rig:4\",\"clip\":\"run\",\"time\":0.25,\"joints\":[{\"name\":", 0), 0u)
      << r.out.substr(0, 200);
  for (const char* key : {"\"node\":", "\"t\":[", "\"r\":[", "\"s\":[", "\"palette\":["}) {
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  }
  // Four joints, one palette each.
  std::size_t palettes = 0;
  for (std::size_t at = r.out.find("\"palette\""); at != std::string::npos; at = r.out.find("\"palette\"", at + 1)) ++palettes;
  EXPECT_EQ(palettes, 4u);
}

TEST(Cli, EvalRestPoseOfGeneratedRigIsIdentityPalette) {
  const CliRun r = run_posecast("eval gen-rig:3 --clip rest --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The generated rig's inverse binds match its rest pose: every palette is the identity.
  const std::string key = "\"palette\":[";
  std::size_t palettes = 0;
  for (std::size_t at = r.out.find(key); at != std::string::npos; at = r.out.find(key, at + 1)) {
    const std::size_t begin = at + key.size();
    const std::size_t end = r.out.find(']', begin);
    ASSERT_NE(end, std::string::npos) << r.out.substr(at, 200);
    EXPECT_EQ(r.out.substr(begin, end - begin), "1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1") << "joint " << palettes;
    ++palettes;
  }
  EXPECT_EQ(palettes, 3u) << r.out.substr(0, 400);  // gen-rig:3: three joints
}

TEST(Cli, GenRigWritesAFileInfoCanRead) {
  const std::string path = testing::TempDir() + "rig7.glb";
  const CliRun gen = run_posecast("gen-rig --joints 7 --out " + path);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const CliRun info = run_posecast("info " + path);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("7 joints"), std::string::npos) << info.out;
  for (const char* clip : {"idle", "walk", "run", "wave", "step_pose", "sway_cubic"}) {
    EXPECT_NE(info.out.find(clip), std::string::npos) << clip;
  }
  EXPECT_EQ(run_posecast("gen-rig --joints 513 --out " + path).exit_code, 2);
  EXPECT_EQ(run_posecast("gen-rig --joints 7 --out /nonexistent/dir/x.glb").exit_code, 1);
  std::remove(path.c_str());
}

}  // namespace
