# torch.__version__ / torchvision.__version__ in converted code: programs compare them to pick
# an API variant (`if version.parse(torch.__version__) >= version.parse("2.0")`). The converted
# code follows the torch API that msmigrate's mappings were proved against, so it reports
# those versions: the modern branch is taken, as it would be under a current torch.
TORCH_API_VERSION = "2.13.0"
TORCHVISION_API_VERSION = "0.28.0"
