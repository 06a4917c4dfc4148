from skillassay.cli.main import main

main()
