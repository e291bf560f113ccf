from torchwise.cli import main

main()
