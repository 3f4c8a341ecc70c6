// A user's TorchScript model through the commands a user types (docs/your_model.md): run with the
// gradient check (threads and processes), profile, run --predict from the profile, plan from the
// profile; and the named errors of bad files and flags with their exit codes.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#define PIPEWORKS_EXE (std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks")
#include "cli/run_pipeworks.h"
#include "temp_path.h"

namespace pipeworks::hw {
namespace {

namespace fs = std::filesystem;

std::string model_file(const std::string& name) { return std::string(PIPEWORKS_SCRIPTED_MODELS_DIR) + "/" + name; }

const std::string kConvnet =
    "--model " + model_file("convnet.pt") + " --input-shape 3,8,8 --loss cross_entropy --intra-op-threads 1 ";

TEST_CASE("run trains a scripted model and its gradients equal the reference's, in threads and in processes") {
  for (const std::string schedule : {"gpipe --recompute", "1f1b"}) {
    const test::CliRun run =
        test::run_pipeworks("run " + kConvnet + "-K 3 -M 4 --batch 16 --steps 2 --check --schedule " + schedule);
    INFO(run.output);
    CHECK(run.exit_code == 0);
    CHECK_THAT(run.output, Catch::Contains("pipeworks run: convnet on cpu, 3 stages x 4 micro-batches"));
    CHECK_THAT(run.output, Catch::Contains("exactly equal") && Catch::Contains("PASS"));
  }
  const test::CliRun with_data =
      test::run_pipeworks("run --model " + model_file("convnet.pt") + " --data " + model_file("convnet_data.pt") +
                          " --loss cross_entropy --intra-op-threads 1 -K 2 -M 2 --batch 8 --steps 2 --check");
  INFO(with_data.output);
  CHECK(with_data.exit_code == 0);
  CHECK_THAT(with_data.output, Catch::Contains("exactly equal"));
  const test::CliRun launched = test::run_pipeworks("launch -n 2 --kill-after 120 -- " + PIPEWORKS_EXE + " run " +
                                                    kConvnet + "-K 2 -M 4 --batch 8 --steps 2 --check --distributed");
  INFO(launched.output);
  CHECK(launched.exit_code == 0);
  CHECK_THAT(launched.output, Catch::Contains("exactly equal"));
}

TEST_CASE("a scripted model is profiled once, then predicted and planned from its profile") {
  const fs::path dir = test::temp_path("scripted");
  fs::create_directories(dir);
  const std::string spec = (dir / "convnet.json").string();
  const std::string cluster = (dir / "cpu.json").string();
  const test::CliRun profile = test::run_pipeworks("profile " + kConvnet +
                                                   "--microbatch-sizes 1,4 --warmup 1 --repetitions 3 --workers 2 "
                                                   "-o " + spec + " --cluster-out " + cluster);
  INFO(profile.output);
  REQUIRE(profile.exit_code == 0);
  CHECK_THAT(test::read_text_file(spec), Catch::Contains("\"name\": \"convnet\"") && Catch::Contains("\"conv1\"") &&
                                              Catch::Contains("\"fc\""));
  const test::CliRun predicted = test::run_pipeworks("run " + kConvnet + "-K 2 -M 4 --batch 16 --steps 3 --predict " +
                                                     "--model-spec " + spec + " --cluster-spec " + cluster +
                                                     " --no-stage-replay --partition balanced");
  INFO(predicted.output);
  CHECK(predicted.exit_code == 0);
  CHECK_THAT(predicted.output, Catch::Contains("predicted") && Catch::Contains("measured"));
  const test::CliRun plan =
      test::run_pipeworks("plan --model-spec " + spec + " --cluster-spec " + cluster + " --batch 16 --devices 2");
  INFO(plan.output);
  CHECK(plan.exit_code == 0);
  fs::remove_all(dir);
}

TEST_CASE("bad TorchScript files exit 1 naming the file or the child, bad flags exit 2 before any header") {
  struct Case {
    std::string arguments;
    int exit_code;
    std::string expected;
    bool run_only = false;  // flags of run, not of profile
  };
  const std::vector<Case> cases = {
      {"--model " + model_file("not_torchscript.pt") + " --input-shape 8", 1, "is not a TorchScript module"},
      {"--model " + model_file("two_inputs.pt") + " --input-shape 8", 1, "child 'join' (TwoInputs)"},
      {"--model " + model_file("mlp.pt") + " --input-shape 3,4", 1,
       "child '0' (linear.Linear) failed on a (2, 3, 4) tensor"},
      {"--model " + model_file("mlp.pt"), 2, "needs --input-shape, one sample's shape (e.g. 3,32,32), or --data"},
      {"--model " + model_file("mlp.pt") + " --input-shape 8,x", 2, "--input-shape: sample shape '8,x'"},
      {"--model " + model_file("mlp.pt") + " --input-shape 8 --loss hinge", 2, "--loss: unknown loss 'hinge'"},
      {"--model " + model_file("tokens.pt") + " --input-shape 6 --input-dtype int64", 2, "needs --input-high N"},
      {"--model mlp --input-shape 8", 2, "--input-shape: only for a TorchScript model"},
      {"--model mlp --data " + model_file("mlp_data.pt"), 2, "--data: only for a TorchScript model"},
      {"--model " + model_file("convnet.pt") + " --data " + model_file("data_class_7.pt") + " --loss cross_entropy", 1,
       "target classes span 7..7, outside the model's 0..4"},
      {"--model resnet", 2, "unknown model 'resnet'"},
      {"--model " + model_file("mlp.pt") + " --input-shape 8 -K 6", 2, "6 stages is more than the model's 5 layers", true},
      {"--model " + model_file("dropout.pt") + " --input-shape 8 --recompute", 2,
       "--recompute: child 'drop' of '" + model_file("dropout.pt") + "' draws random numbers (dropout)", true},
  };
  for (const Case& c : cases) {
    for (const std::string command : {"run --steps 1 ", "profile -o /tmp/unused.json "}) {
      if (c.run_only && command.rfind("profile", 0) == 0) continue;
      const test::CliRun run = test::run_pipeworks(command + c.arguments);
      INFO(command << c.arguments << "\n" << run.output);
      CHECK(run.exit_code == c.exit_code);
      CHECK_THAT(run.output, Catch::Contains(c.expected));
      CHECK_THAT(run.output, !Catch::Contains(" on cpu") && !Catch::Contains("Exception raised from"));
    }
  }
}

}  // namespace
}  // namespace pipeworks::hw
