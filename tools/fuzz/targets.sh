# Every libFuzzer target (tests/fuzz/CMakeLists.txt), in the order tools/fuzz/run.sh and campaign.sh run them.
# shellcheck disable=SC2034 # read by the scripts that source this file
fuzz_targets=(fuzz_safetensors fuzz_torch_checkpoint fuzz_gguf fuzz_ollama fuzz_configs fuzz_npy fuzz_image
  fuzz_attention_json fuzz_marian_config fuzz_tokenizer fuzz_text_tokenizer fuzz_hf_tokenizer fuzz_chat_template
  fuzz_clip_tokenizer fuzz_session)
