from __future__ import annotations

from toolbench import Profile, Workbench


def _skills(root) -> None:
    (root / "style").mkdir(parents=True)
    (root / "style" / "SKILL.md").write_text("---\nname: style\ndescription: House style rules.\n---\nBe brief.\n")
    (root / "notaskill").mkdir()
    (root / "notaskill" / "x.txt").write_text("x")


def test_skills_dir_outside_the_workspace_is_listed_and_read_only(tmp_path) -> None:
    _skills(tmp_path / "myskills")
    profile = Profile.default().edit(workspace={"skills_dir": str(tmp_path / "myskills")})
    with Workbench(tmp_path / "ws", profile) as bench:
        assert bench.skills == [{"name": "style", "description": "House style rules.",
                                 "path": "skills/style/SKILL.md"}]
        inv = bench.invocation()
        r = inv.call("workspace_read_file", {"path": "skills/style/SKILL.md"})
        assert not r.is_error and "Be brief." in r.content
        assert inv.call("workspace_read_file", {"path": "skills/notaskill/x.txt"}).error_code == \
            "workspace.file_not_found"
        r = inv.call("workspace_write_file", {"path": "skills/style/SKILL.md", "content": "x"})
        assert r.error_code == "workspace.path_not_writable"
        listing = inv.call("workspace_list_files", {"path": "skills"})
        assert listing.structured["entries"] == ["skills/style/", "skills/style/SKILL.md"]
        shell = inv.call("workspace_shell", {"command": "cat /skills/style/SKILL.md"})
        assert "Be brief." in shell.content
        shell = inv.call("workspace_shell", {"command": "echo x > /skills/style/new.txt"})
        assert shell.is_error and not (tmp_path / "myskills" / "style" / "new.txt").exists()


def test_skill_symlink_out_of_its_folder_is_refused(tmp_path) -> None:
    _skills(tmp_path / "ws" / "skills")
    (tmp_path / "ws" / "skills" / "style" / "pw").symlink_to("/etc/passwd")
    with Workbench(tmp_path / "ws") as bench:
        r = bench.invocation().call("workspace_read_file", {"path": "skills/style/pw"})
        assert r.error_code == "workspace.path_not_visible"
        assert [s["name"] for s in bench.skills] == ["style"]
