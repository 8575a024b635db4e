#pragma once
// ViewerAction: what a key (interactive) or a scripted --act entry (headless) asks the pose
// source to do. Network sources turn them into ClientCommands for the entity this viewer owns,
// ReplayControls for a replay server and HitQuery messages (kFire, which the run loops hand to
// PoseSource::fire with the camera's view); a local source ignores them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "posecast/result.h"

namespace posecast::viewer {

enum class ViewerAction {
  kIdle,           // crossfade the owned entity to "idle"        (key 1)
  kWalk,           // ... to "walk"                                (key 2)
  kRun,            // ... to "run"                                 (key 3)
  kWave,           // ... to "wave"                                (key 4)
  kFaster,         // owned entity playback speed x1.25            (key =)
  kSlower,         // owned entity playback speed /1.25            (key -)
  kNextOwned,      // select the next owned entity                 (Tab)
  kReplayToggle,   // replay: pause / resume                       (P)
  kReplayStep,     // replay, paused: one tick forward             (.)
  kReplayBack,     // replay: seek 5 s back                        (Left)
  kReplayForward,  // replay: seek 5 s forward                     (Right)
  kReplaySlower,   // replay: half speed                           ([)
  kReplayFaster,   // replay: double speed                         (])
  kSteerFaster,    // owned entity: stand -> walk -> run (Move)     (W, Up)
  kSteerSlower,    // owned entity: run -> walk -> stand            (S, Down)
  kSteerLeft,      // owned entity: turn more to the left (Move); in a replay: seek back   (A, Left)
  kSteerRight,     // owned entity: turn more to the right; in a replay: seek forward      (D, Right)
  kFollowToggle,   // the camera follows the owned entity, or not   (C)
  kFire,           // a hit query along the view (PoseSource::fire) (Enter, left click)
};

// The name used by --act and in messages ("idle", "walk", ..., "replay-toggle").
std::string_view to_string(ViewerAction action);
std::optional<ViewerAction> parse_viewer_action(std::string_view name);

// One scripted action of a headless run: `action` before rendering frame `frame`.
struct ScriptedAction {
  uint32_t frame = 0;
  ViewerAction action = ViewerAction::kIdle;
};

// Parses "FRAME:NAME[,FRAME:NAME...]" (frames need not be sorted; the result is, stably).
// Errors name the bad entry.
Result<std::vector<ScriptedAction>> parse_action_script(std::string_view text);

}  // namespace posecast::viewer
