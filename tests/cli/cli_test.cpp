// The posecast binary as a user runs it: one clear line on stderr and a documented exit code for
// every kind of bad input; output shapes for info, eval and gen-rig.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
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

TEST(Cli, NoArgumentsPrintsUsageAndExitsWithUsageCode) {
  const CliRun r = run_posecast("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("usage: posecast"), std::string::npos);
}

TEST(Cli, UnknownCommandIsAUsageError) {
  const CliRun r = run_posecast("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos);
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* command : {"info", "eval", "gen-rig"}) {
    const CliRun r = run_posecast(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find("usage: posecast " + std::string(command)), std::string::npos) << command;
  }
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
