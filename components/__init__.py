"""Reflex UI components shared by the pages."""
