#include "viewer_action.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <utility>

namespace posecast::viewer {
namespace {

constexpr std::array<std::pair<ViewerAction, std::string_view>, 19> kNames = {{
    {ViewerAction::kIdle, "idle"},
    {ViewerAction::kWalk, "walk"},
    {ViewerAction::kRun, "run"},
    {ViewerAction::kWave, "wave"},
    {ViewerAction::kFaster, "faster"},
    {ViewerAction::kSlower, "slower"},
    {ViewerAction::kNextOwned, "next-owned"},
    {ViewerAction::kReplayToggle, "replay-toggle"},
    {ViewerAction::kReplayStep, "replay-step"},
    {ViewerAction::kReplayBack, "replay-back"},
    {ViewerAction::kReplayForward, "replay-forward"},
    {ViewerAction::kReplaySlower, "replay-slower"},
    {ViewerAction::kReplayFaster, "replay-faster"},
    {ViewerAction::kSteerFaster, "steer-faster"},
    {ViewerAction::kSteerSlower, "steer-slower"},
    {ViewerAction::kSteerLeft, "steer-left"},
    {ViewerAction::kSteerRight, "steer-right"},
    {ViewerAction::kFollowToggle, "follow"},
    {ViewerAction::kFire, "fire"},
}};

}  // namespace

std::string_view to_string(ViewerAction action) {
  for (const auto& [value, name] : kNames) {
    if (value == action) return name;
  }
  return "unknown";
}

std::optional<ViewerAction> parse_viewer_action(std::string_view name) {
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

Result<std::vector<ScriptedAction>> parse_action_script(std::string_view text) {
  std::vector<ScriptedAction> script;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view entry = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const std::size_t colon = entry.find(':');
    if (colon == std::string_view::npos) {
      return Error{"--act: '" + std::string(entry) + "' is not FRAME:ACTION"};
    }
    uint32_t frame = 0;
    const std::string_view number = entry.substr(0, colon);
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), frame);
    if (ec != std::errc() || end != number.data() + number.size() || number.empty()) {
      return Error{"--act: '" + std::string(number) + "' is not a frame number"};
    }
    const std::optional<ViewerAction> action = parse_viewer_action(entry.substr(colon + 1));
    if (!action) {
      std::string known;
      for (const auto& [value, name] : kNames) known += (known.empty() ? "" : ", ") + std::string(name);
      return Error{"--act: unknown action '" + std::string(entry.substr(colon + 1)) + "' (one of " + known + ")"};
    }
    script.push_back(ScriptedAction{frame, *action});
  }
  std::stable_sort(script.begin(), script.end(),
                   [](const ScriptedAction& a, const ScriptedAction& b) { return a.frame < b.frame; });
  return script;
}

}  // namespace posecast::viewer
