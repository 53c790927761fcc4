from .quickscan import main

main()
