# SPDX-License-Identifier: MIT
<#
.SYNOPSIS
Boot hvprobe.iso once in a fresh Hyper-V VM and keep its serial log.

.DESCRIPTION
Creates a Generation 1 (BIOS) or Generation 2 (UEFI, Secure Boot off: GRUB
from grub-mkrescue is not signed) VM with no disk and no network, sets its
vCPU count and virtual NUMA topology (one socket per node, static memory
split evenly), attaches the ISO as a DVD, connects COM1 to a named pipe,
starts the VM and copies every byte that arrives on the pipe to
OUTDIR\NAME.serial.log until hvprobe powers the VM off (ACPI S5) or the
timeout passes. OUTDIR\NAME.meta.json describes the VM and the host;
`tools/report OUTDIR` reads both. The VM is removed afterwards unless
-Keep is given.

With -Scenario NAME (a shipped scenario, NAME.VARIANT: the entries the ISO
lists in \boot\hvprobe\scenarios.json) the VM boots that entry of the
same ISO: a small VHDX beside the DVD holds hvprobe-scenario.cfg with
"set default=NAME", which the ISO's GRUB looks for on every disk. The
scenario's vCPUs, NUMA nodes and memory apply unless given. An entry
whose command line has lpj=host boots with lpj_source=hyperv here: the
preset is the TSC rate this Hyper-V host states, never the build
machine's lpj.

With -Thread it boots, one VM after another, every entry of the lpj
thread's table (lpj-thread.ROW@POLICY: each row under each lpj policy,
listed in $ThreadEntries below and checked against the ISO), each with
its row's vCPUs and NUMA nodes, into OUTDIR\ENTRY.serial.log and
.meta.json; `tools/report OUTDIR` then reads the table's runs. It exits
with the worst of the entries' statuses.

Exit status: 0 the VM powered itself off, 1 it timed out (it is turned
off; the log holds what arrived), 2 bad usage or Hyper-V refused a step.

.EXAMPLE
.\tools\hyperv\run-hvprobe.ps1 -Iso .\build\hvprobe.iso -Generation 2 -VCpus 16 -NumaNodes 2

.EXAMPLE
.\tools\hyperv\run-hvprobe.ps1 -Iso .\build\hvprobe.iso -Scenario lpj-hyperv-16.hyperv

.EXAMPLE
.\tools\hyperv\run-hvprobe.ps1 -Iso .\build\hvprobe.iso -Generation 2 -Thread -OutDir .\results\thread
#>
#Requires -RunAsAdministrator
#Requires -Modules Hyper-V
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)][string]$Iso,
    [string]$Name = "hvprobe",
    [ValidateSet(1, 2)][int]$Generation = 2,
    [ValidateRange(1, 240)][int]$VCpus = 2,
    # 0 leaves Hyper-V's default topology (sized from the host's nodes).
    [ValidateRange(0, 64)][int]$NumaNodes = 0,
    [ValidateRange(64, 1048576)][int]$MemoryMB = 512,
    [string]$OutDir = (Join-Path (Get-Location) "results\hyperv"),
    [ValidateRange(10, 86400)][int]$TimeoutSec = 600,
    [string]$Description = "",
    # An ISO entry other than the default: a shipped scenario, NAME.VARIANT.
    [string]$Scenario = "",
    # Boot every entry of the lpj thread's table, each in its own VM.
    [switch]$Thread,
    # Remove a VM of the same name first (it must be one of ours).
    [switch]$Replace,
    # Leave the VM in place afterwards, for a look at its settings.
    [switch]$Keep
)

Set-StrictMode -Version 3
$ErrorActionPreference = "Stop"

function Fail([string]$why) {
    Write-Error "run-hvprobe: $why" -ErrorAction Continue
    exit 2
}

# The ISO's lpj thread entries (tools/commands/mkiso.py: each row of
# tools/scenarios/lpj-thread.toml under each lpj policy).
$ThreadEntries = @(
    "lpj-thread.calibrating-16@hvprobe"
    "lpj-thread.calibrating-16@linux-6.1"
    "lpj-thread.calibrating-16@linux-6.5"
    "lpj-thread.calibrating-16@linux-6.12"
    "lpj-thread.calibrating-16@hv-preset"
    "lpj-thread.preset-16@hvprobe"
    "lpj-thread.preset-16@linux-6.1"
    "lpj-thread.preset-16@linux-6.5"
    "lpj-thread.preset-16@linux-6.12"
    "lpj-thread.preset-16@hv-preset"
    "lpj-thread.one-node-32@hvprobe"
    "lpj-thread.one-node-32@linux-6.1"
    "lpj-thread.one-node-32@linux-6.5"
    "lpj-thread.one-node-32@linux-6.12"
    "lpj-thread.one-node-32@hv-preset"
    "lpj-thread.four-nodes-32@hvprobe"
    "lpj-thread.four-nodes-32@linux-6.1"
    "lpj-thread.four-nodes-32@linux-6.5"
    "lpj-thread.four-nodes-32@linux-6.12"
    "lpj-thread.four-nodes-32@hv-preset"
    "lpj-thread.preset-32@hvprobe"
    "lpj-thread.preset-32@linux-6.1"
    "lpj-thread.preset-32@linux-6.5"
    "lpj-thread.preset-32@linux-6.12"
    "lpj-thread.preset-32@hv-preset"
)

$Iso = (Resolve-Path -LiteralPath $Iso).Path
if ($Thread) {
    if ($Scenario) { Fail "-Thread boots the thread's entries; give it no -Scenario" }
    foreach ($bound in "VCpus", "NumaNodes", "MemoryMB") {
        if ($PSBoundParameters.ContainsKey($bound)) { Fail "-Thread takes each entry's own machine; give it no -$bound" }
    }
    # One run of this script per entry, its VM and files named after it,
    # so that a failed boot leaves the others' results in place.
    $worst = 0
    foreach ($id in $ThreadEntries) {
        Write-Output "== $id"
        try {
            & $PSCommandPath -Iso $Iso -Scenario $id -Name $id -Generation $Generation `
                -OutDir $OutDir -TimeoutSec $TimeoutSec -Description $Description `
                -Replace:$Replace -Keep:$Keep
            $status = $LASTEXITCODE
        } catch {
            Write-Error "run-hvprobe: ${id}: $_" -ErrorAction Continue
            $status = 2
        }
        if ($status -gt $worst) { $worst = $status }
    }
    Write-Output "report:     python3 tools/report $OutDir"
    exit $worst
}
$cmdline = $null
if ($Scenario) {
    # The ISO's list of entries: mount it read-only, read, dismount.
    $image = Mount-DiskImage -ImagePath $Iso -Access ReadOnly -PassThru
    try {
        $letter = ($image | Get-Volume).DriveLetter
        $index = Get-Content -Raw -LiteralPath "${letter}:\boot\hvprobe\scenarios.json" | ConvertFrom-Json
    } finally {
        Dismount-DiskImage -ImagePath $Iso | Out-Null
    }
    $entry = $index.entries | Where-Object { $_.id -eq $Scenario }
    if (-not $entry) { Fail "the ISO has no entry $Scenario (entries: $(($index.entries | ForEach-Object { $_.id }) -join ', '))" }
    # What GRUB boots with no hvprobe_lpj on the disk: lpj=host as
    # lpj_source=hyperv (an older ISO's index has the one command line).
    $cmdline = $(if ($entry.PSObject.Properties["hyperv_cmdline"]) { $entry.hyperv_cmdline } else { $entry.cmdline })
    if ($entry.machine) {
        if (-not $PSBoundParameters.ContainsKey("VCpus")) { $VCpus = $entry.machine.vcpus }
        if (-not $PSBoundParameters.ContainsKey("NumaNodes")) { $NumaNodes = $entry.machine.numa }
        if (-not $PSBoundParameters.ContainsKey("MemoryMB")) { $MemoryMB = $entry.machine.mem_mib }
    }
}
if ($NumaNodes -gt 0) {
    if ($VCpus % $NumaNodes -ne 0) { Fail "$VCpus vCPUs do not split evenly into $NumaNodes NUMA nodes" }
    if ($MemoryMB % $NumaNodes -ne 0 -or ($MemoryMB / $NumaNodes) % 2 -ne 0) {
        Fail "$MemoryMB MB does not split into $NumaNodes nodes of an even number of MB"
    }
}
New-Item -ItemType Directory -Force -Path $OutDir | Out-Null
$log = Join-Path $OutDir "$Name.serial.log"
$meta = Join-Path $OutDir "$Name.meta.json"
$pipeName = "hvprobe-$Name-com1"

# 1. A fresh VM: no disk, no network, static memory. Virtual NUMA needs
#    static memory (Hyper-V ignores the topology with Dynamic Memory on).
if (Get-VM -Name $Name -ErrorAction SilentlyContinue) {
    if (-not $Replace) { Fail "a VM named $Name exists; pick another -Name or pass -Replace" }
    Stop-VM -Name $Name -TurnOff -Force -ErrorAction SilentlyContinue
    Remove-VM -Name $Name -Force
}
$vm = New-VM -Name $Name -Generation $Generation -MemoryStartupBytes ([int64]$MemoryMB * 1MB) -NoVHD
try {
    Get-VMNetworkAdapter -VM $vm | Remove-VMNetworkAdapter
    Set-VMMemory -VM $vm -DynamicMemoryEnabled $false

    # 2. vCPUs and NUMA: N nodes of VCpus/N vCPUs and MemoryMB/N MB each,
    #    one node per socket, as tools/run --numa lays out a QEMU guest.
    if ($NumaNodes -gt 0) {
        Set-VMProcessor -VM $vm -Count $VCpus `
            -MaximumCountPerNumaNode ($VCpus / $NumaNodes) -MaximumCountPerNumaSocket 1
        Set-VMMemory -VM $vm -MaximumAmountPerNumaNodeBytes ([int64]($MemoryMB / $NumaNodes) * 1MB)
    } else {
        Set-VMProcessor -VM $vm -Count $VCpus
    }

    # 3. The ISO as a DVD: Gen1 has one on IDE 1:0 already; Gen2 gets a
    #    SCSI one, boots it first, with Secure Boot off.
    if ($Generation -eq 1) {
        if (Get-VMDvdDrive -VM $vm) {
            Set-VMDvdDrive -VMName $Name -ControllerNumber 1 -ControllerLocation 0 -Path $Iso
        } else {
            Add-VMDvdDrive -VM $vm -ControllerNumber 1 -ControllerLocation 0 -Path $Iso
        }
    } else {
        $dvd = Add-VMDvdDrive -VM $vm -Path $Iso -Passthru
        Set-VMFirmware -VM $vm -EnableSecureBoot Off -FirstBootDevice $dvd
    }

    # 3b. -Scenario: a small disk whose hvprobe-scenario.cfg names the
    #     entry GRUB boots (boot/grub.cfg searches every disk for it).
    if ($Scenario) {
        $vhd = Join-Path $OutDir "$Name.scenario.vhdx"
        Remove-Item -LiteralPath $vhd -ErrorAction SilentlyContinue
        New-VHD -Path $vhd -SizeBytes 64MB -Dynamic | Out-Null
        $disk = Mount-VHD -Path $vhd -Passthru | Get-Disk
        try {
            Initialize-Disk -Number $disk.Number -PartitionStyle MBR
            $part = New-Partition -DiskNumber $disk.Number -UseMaximumSize -AssignDriveLetter
            Format-Volume -Partition $part -FileSystem FAT -NewFileSystemLabel HVPROBE -Confirm:$false | Out-Null
            # GRUB reads it as a script: ASCII, one line, the name quoted.
            [System.IO.File]::WriteAllText("$($part.DriveLetter):\hvprobe-scenario.cfg", "set default='$Scenario'`n", [System.Text.Encoding]::ASCII)
        } finally {
            Dismount-VHD -Path $vhd
        }
        if ($Generation -eq 1) {
            Add-VMHardDiskDrive -VM $vm -ControllerType IDE -ControllerNumber 0 -ControllerLocation 0 -Path $vhd
        } else {
            Add-VMHardDiskDrive -VM $vm -ControllerType SCSI -Path $vhd
            Set-VMFirmware -VM $vm -FirstBootDevice $dvd
        }
    }

    # 4. COM1 to a named pipe. Hyper-V is the pipe's server while the VM
    #    runs; we connect as its client and read.
    Set-VMComPort -VM $vm -Number 1 -Path "\\.\pipe\$pipeName"

    $started = (Get-Date).ToUniversalTime().ToString("yyyy-MM-ddTHH:mm:ssZ")
    Start-VM -VM $vm

    # 5. Copy the pipe to the log until the VM is off. Connect at once:
    #    GRUB takes seconds, hvprobe's first line comes after it.
    $pipe = New-Object System.IO.Pipes.NamedPipeClientStream(".", $pipeName, [System.IO.Pipes.PipeDirection]::In)
    $pipe.Connect(30000)
    $file = [System.IO.File]::Open($log, [System.IO.FileMode]::Create, [System.IO.FileAccess]::Write)
    $copy = $pipe.CopyToAsync($file)
    $deadline = (Get-Date).AddSeconds($TimeoutSec)
    $timedOut = $false
    while ((Get-VM -Name $Name).State -ne "Off") {
        if ((Get-Date) -gt $deadline) {
            $timedOut = $true
            Stop-VM -VM $vm -TurnOff -Force
            break
        }
        Start-Sleep -Milliseconds 500
    }
    # The pipe closes when the VM stops; give the last bytes a moment.
    [void]$copy.Wait(5000)
    $file.Dispose()
    $pipe.Dispose()

    # 6. What tools/report needs to name and describe the run.
    $cpu = (Get-CimInstance Win32_Processor | Select-Object -First 1).Name
    $os = Get-CimInstance Win32_OperatingSystem
    [ordered]@{
        name = $Name
        description = $Description
        started_at = $started
        timed_out = $timedOut
        cmdline = $cmdline   # the -Scenario entry's; $null: the ISO's default entry
        scenario = $(if ($Scenario) { $Scenario } else { $null })
        machine = [ordered]@{
            boot = $(if ($Generation -eq 1) { "bios" } else { "uefi" })
            generation = $Generation
            vcpus = $VCpus
            numa = $NumaNodes
            mem_mib = $MemoryMB
            iso = $Iso
        }
        host = [ordered]@{
            hostname = $env:COMPUTERNAME
            os = $os.Caption
            kernel = $os.Version
            arch = $env:PROCESSOR_ARCHITECTURE
            cpu_model = $cpu
            cpus = [Environment]::ProcessorCount
            accel = "hyperv"
        }
    } | ConvertTo-Json -Depth 4 | Set-Content -LiteralPath $meta -Encoding UTF8
    # (Windows PowerShell writes UTF-8 with a byte-order mark; tools/report
    # accepts it.)
} finally {
    if (-not $Keep) {
        Stop-VM -Name $Name -TurnOff -Force -ErrorAction SilentlyContinue
        Remove-VM -Name $Name -Force -ErrorAction SilentlyContinue
        if ($Scenario) { Remove-Item -LiteralPath (Join-Path $OutDir "$Name.scenario.vhdx") -ErrorAction SilentlyContinue }
    }
}

Write-Output "serial log: $log"
Write-Output "report:     python3 tools/report $OutDir"
if ($timedOut) {
    Write-Output "TIMEOUT: the VM was still running after $TimeoutSec s and was turned off"
    exit 1
}
exit 0
