"""Naming footage: files, folders (recursive), symlinks, and things that are not there."""

import os
import shutil

from marlin_agent.media.sources import resolve_sources


def names(resolved):
    return sorted(v.path.name for v in resolved.videos)


def test_folders_are_searched_recursively_for_video_extensions(tmp_path, footage):
    (tmp_path / "a" / "b").mkdir(parents=True)
    shutil.copy(footage["short_field"], tmp_path / "a" / "one.MP4")
    shutil.copy(footage["short_field"], tmp_path / "a" / "b" / "two.mkv")
    (tmp_path / "a" / "notes.txt").write_text("x")
    (tmp_path / "a" / ".hidden.mp4").write_text("x")
    assert names(resolve_sources([str(tmp_path)])) == ["one.MP4", "two.mkv"]


def test_a_file_named_directly_is_taken_whatever_its_extension(tmp_path, footage):
    odd = tmp_path / "recording.bin"
    shutil.copy(footage["short_field"], odd)
    assert names(resolve_sources([str(odd)])) == ["recording.bin"]


def test_the_same_file_named_twice_or_through_a_symlink_counts_once(tmp_path, footage):
    shutil.copy(footage["short_field"], tmp_path / "clip.mp4")
    os.symlink(tmp_path / "clip.mp4", tmp_path / "alias.mp4")
    resolved = resolve_sources([str(tmp_path / "clip.mp4"), str(tmp_path)])
    assert len(resolved.videos) == 1


def test_a_broken_symlink_is_reported_not_fatal(tmp_path):
    os.symlink(tmp_path / "gone.mp4", tmp_path / "dangling.mp4")
    resolved = resolve_sources([str(tmp_path)])
    assert resolved.videos == [] and [s.code for s in resolved.skipped] == ["broken_link"]


def test_a_symlink_loop_does_not_hang(tmp_path, footage):
    (tmp_path / "inner").mkdir()
    shutil.copy(footage["short_field"], tmp_path / "inner" / "clip.mp4")
    os.symlink(tmp_path, tmp_path / "inner" / "back-to-top")
    assert names(resolve_sources([str(tmp_path)])) == ["clip.mp4"]


def test_a_missing_path_is_reported(tmp_path):
    resolved = resolve_sources([str(tmp_path / "nope")])
    assert resolved.videos == [] and resolved.skipped[0].code == "video_not_found"
