"""The organization service's demo: a temporary service on the bundled demo servers, and the web console on it."""

from mcpyard.org.demo._demo import demo_servers, run_demo
from mcpyard.org.demo._demo_console import DemoConsole, DemoModel, demo_console

__all__ = ["DemoConsole", "DemoModel", "demo_console", "demo_servers", "run_demo"]
